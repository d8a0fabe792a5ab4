import type { ComponentChildren } from 'preact';

/**
 * A table that scrolls sideways on narrow screens: a caption for screen readers, one header row
 * (a `false` column is left out) and the rows given as children.
 */
export function DataTable(props: { caption: string; columns: (string | false)[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map(
              (column) =>
                column !== false && (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

import { useRef, useState } from 'preact/hooks';
import { errorText, uploadWithProgress } from '../api.ts';

interface UploadRow {
  readonly id: number;
  readonly name: string;
  progress: number;
  error: string | null;
  documentId: string | null;
}

/** Files chosen with the picker or dropped on the zone, each uploaded with its own progress bar. */
export function UploadZone(props: { onUploaded: (documentId: string) => void }) {
  const [rows, setRows] = useState<UploadRow[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const nextId = useRef(1);

  const update = (id: number, patch: Partial<UploadRow>) =>
    setRows((all) => all.map((r) => (r.id === id ? { ...r, ...patch } : r)));

  const upload = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const id = nextId.current++;
      setRows((all) => [...all, { id, name: file.name, progress: 0, error: null, documentId: null }]);
      const form = new FormData();
      form.append('file', file, file.name);
      uploadWithProgress<{ document_id: string }>('POST', '/api/v1/documents', form, (p) =>
        update(id, { progress: p }),
      ).then(
        (r) => {
          update(id, { progress: 1, documentId: r.document_id });
          props.onUploaded(r.document_id);
        },
        (e) => update(id, { error: errorText(e) }),
      );
    }
  };

  return (
    <section class="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload</h2>
      <section
        class={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        aria-label="Drop files here to upload them"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) upload(e.dataTransfer.files);
        }}
      >
        <p>Drop files here, or</p>
        <button type="button" class="primary" onClick={() => input.current?.click()}>
          Choose files…
        </button>
        <input
          ref={input}
          type="file"
          multiple
          class="sr-only"
          aria-label="Files to upload"
          tabIndex={-1}
          onChange={(e) => {
            if (e.currentTarget.files) upload(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
        <p class="muted small">.txt .md .csv .json .pdf .docx .xlsx, up to 50 MB each</p>
      </section>
      {rows.length > 0 && (
        <ul class="uploads">
          {rows.map((r) => (
            <li key={r.id}>
              <span class="name">{r.name}</span>
              {r.error ? (
                <span class="error-text">not stored</span>
              ) : (
                <progress max={1} value={r.progress} aria-label={`Upload of ${r.name}`} />
              )}
              <span class={r.error ? 'error-text' : 'muted'}>
                {r.error ??
                  (r.documentId ? 'uploaded; its status is in the list below' : `${Math.round(r.progress * 100)} %`)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

import { describe, expect, it } from 'vitest';
import { snippetParts } from '../../../apps/dashboard/src/components/snippet-parts.ts';

describe('the dashboard search snippet', () => {
  it('marks the terms the API wrapped in <em> and shows the escaped text as the document has it', () => {
    expect(snippetParts('&lt;<em>script</em>&gt;alert(&quot;x&#39;s&quot;) &amp; <em>beta</em>&amp;lt;')).toEqual([
      { text: '<', marked: false },
      { text: 'script', marked: true },
      { text: `>alert("x's") & `, marked: false },
      { text: 'beta', marked: true },
      { text: '&lt;', marked: false },
    ]);
  });
});

'use strict';
(async () => {
  await srdma.init();
  const { el } = srdma;
  const editor = document.getElementById('editor');
  const box = document.getElementById('message');
  const result = document.getElementById('result');
  const errors = document.getElementById('errors');
  const diff = document.getElementById('diff');
  const dialog = document.getElementById('confirm');
  let running = null;

  async function loadRunning() {
    running = await srdma.api('GET', '/api/policy');
    document.getElementById('source').textContent = running.source;
    document.getElementById('sha').textContent = running.sha256;
    editor.value = running.text;
  }

  function goTo(line, column) {
    const lines = editor.value.split('\n');
    let pos = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
    pos += Math.max(0, column - 1);
    editor.focus();
    editor.setSelectionRange(pos, pos);
  }

  function showErrors(list) {
    errors.replaceChildren(...list.map((e) => el('li', {
      text: e.line + ':' + e.column + ': ' + e.reason, 'data-line': e.line, 'data-column': e.column,
      onclick: () => goTo(e.line, e.column),
    })));
  }

  function showDiff(lines) {
    const out = [];
    let same = [];
    const flush = (end) => {
      if (same.length > 6) {
        out.push(...same.slice(0, 3).map((l) => el('span', { text: '  ' + l.text })));
        out.push(el('span', { class: 'gap', text: '  … ' + (same.length - 6) + ' unchanged lines' }));
        out.push(...same.slice(-3).map((l) => el('span', { text: '  ' + l.text })));
      } else if (!end || same.length <= 6) {
        out.push(...same.map((l) => el('span', { text: '  ' + l.text })));
      }
      same = [];
    };
    for (const l of lines) {
      if (l.op === ' ') { same.push(l); continue; }
      flush(false);
      out.push(el('span', { class: l.op === '+' ? 'add' : 'del', text: l.op + ' ' + l.text }));
    }
    flush(true);
    diff.replaceChildren(...out);
  }

  async function validate() {
    const r = await srdma.api('POST', '/api/policy/validate', { text: editor.value });
    if (r.valid) {
      result.textContent = 'Valid. SHA-256 ' + r.sha256 + (r.changed ? '' : ' (same as running)');
      result.className = 'ok';
    } else {
      result.textContent = r.errors.length + (r.errors.length === 1 ? ' error' : ' errors') + ':';
      result.className = 'bad';
    }
    showErrors(r.errors);
    showDiff(r.diff);
    return r;
  }

  document.getElementById('upload').addEventListener('change', async (ev) => {
    const f = ev.target.files[0];
    if (!f) return;
    editor.value = await f.text();
    await validate();
  });
  document.getElementById('reset').addEventListener('click', async () => { await loadRunning(); await validate(); });
  document.getElementById('validate').addEventListener('click', validate);
  document.getElementById('apply').addEventListener('click', async () => {
    const r = await validate();
    if (r.valid) dialog.showModal();
  });
  document.getElementById('confirm-cancel').addEventListener('click', () => dialog.close());
  document.getElementById('confirm-ok').addEventListener('click', async () => {
    dialog.close();
    try {
      const r = await srdma.api('POST', '/api/policy/apply', { text: editor.value, base: running.sha256 });
      srdma.showMessage(box, 'Applied: policy ' + r.sha256.substring(0, 12) + ' is in force; '
        + r.forbidden.length + ' live grant(s) no longer allowed were revoked.', true);
      await loadRunning();
      await validate();
    } catch (e) {
      srdma.showMessage(box, 'Not applied: ' + e.message, false);
      if (e.data && e.data.errors) showErrors(e.data.errors);
    }
  });
  await loadRunning();
})();

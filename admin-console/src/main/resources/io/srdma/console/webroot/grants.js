'use strict';
(async () => {
  const me = await srdma.init();
  const { el } = srdma;
  const box = document.getElementById('message');
  const dialog = document.getElementById('confirm');
  let pending = null;

  const policy = await srdma.api('GET', '/api/policy');
  const tenantSelect = document.getElementById('f-tenant');
  for (const t of policy.tenants) tenantSelect.append(el('option', { value: t, text: t }));

  async function load() {
    const q = new URLSearchParams();
    for (const f of ['tenant', 'peer', 'region']) {
      const v = document.getElementById('f-' + f).value.trim();
      if (v) q.set(f, v);
    }
    const data = await srdma.api('GET', '/api/grants?' + q);
    srdma.fillTable(document.getElementById('rows'), data.items.map((g) => el('tr', { 'data-grant': g.grantId },
      el('td', { class: 'mono', text: g.grantId }),
      el('td', { class: 'mono', text: g.identity }),
      el('td', { text: g.tenant + ' / ' + g.region }),
      el('td', { class: 'mono', text: '[' + g.offset + ', ' + (g.offset + g.length) + ')' }),
      el('td', { text: g.operations.join(', ') }),
      el('td', { text: srdma.time(g.issuedAt) }),
      el('td', { text: srdma.time(g.expiresAt) }),
      el('td', { class: 'mono', text: g.sessionId || '' }),
      el('td', { class: 'admin-only' }, me.admin ? el('button', {
        class: 'danger revoke', text: 'Revoke', 'data-grant': g.grantId, onclick: () => ask(g),
      }) : null))), 'No live grants match.', 9);
  }

  function ask(g) {
    pending = g;
    document.getElementById('confirm-text').textContent = 'Revoke ' + g.grantId + ' held by ' + g.identity
      + ' on ' + g.tenant + '/' + g.region + ' [' + g.offset + ', ' + (g.offset + g.length) + ')?';
    dialog.showModal();
  }

  document.getElementById('confirm-cancel').addEventListener('click', () => { pending = null; dialog.close(); });
  document.getElementById('confirm-ok').addEventListener('click', async () => {
    const g = pending;
    pending = null;
    dialog.close();
    if (!g) return;
    try {
      await srdma.api('DELETE', '/api/grants/' + encodeURIComponent(g.grantId));
      srdma.showMessage(box, 'Revoked ' + g.grantId + ' (' + g.identity + ').', true);
    } catch (e) {
      srdma.showMessage(box, 'Not revoked: ' + e.message, false);
    }
    await load();
  });
  document.getElementById('filters').addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  document.getElementById('clear-filter').addEventListener('click', () => {
    document.getElementById('filters').reset();
    load();
  });
  await load();
})();

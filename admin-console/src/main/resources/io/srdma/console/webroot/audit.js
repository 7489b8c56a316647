'use strict';
(async () => {
  await srdma.init();
  const { el } = srdma;
  const LIMIT = 50;
  let offset = 0;
  let total = 0;

  function query() {
    const q = new URLSearchParams();
    for (const f of ['from', 'to']) {
      const v = document.getElementById('f-' + f).value;
      if (v) q.set(f, new Date(v).toISOString());
    }
    for (const f of ['tenant', 'action', 'outcome', 'q']) {
      const v = document.getElementById('f-' + f).value.trim();
      if (v) q.set(f, v);
    }
    return q;
  }

  function details(a) {
    const parts = [];
    for (const k of ['peer', 'region', 'grant', 'ops']) if (a[k]) parts.push(k + '=' + a[k]);
    if (a.length !== undefined) parts.push('[' + a.offset + ', ' + (a.offset + a.length) + ')');
    if (a.policy) parts.push('policy=' + a.policy.substring(0, 12));
    if (a.detail) parts.push(a.detail);
    return parts.join(' · ');
  }

  async function load() {
    const q = query();
    document.getElementById('export').href = '/api/audit/export?' + q;
    q.set('offset', offset);
    q.set('limit', LIMIT);
    const data = await srdma.api('GET', '/api/audit?' + q);
    total = data.total;
    srdma.fillTable(document.getElementById('rows'), data.items.map((a) => el('tr', {},
      el('td', { class: 'num', text: a.seq }),
      el('td', { text: srdma.time(a.time) }),
      el('td', { text: a.action }),
      el('td', {}, el('span', { class: 'badge ' + a.outcome, text: a.outcome })),
      el('td', { class: 'mono', text: a.actor || '' }),
      el('td', { text: a.tenant || '' }),
      el('td', { text: a.reason || '' }),
      el('td', { class: 'mono', text: details(a) }))), 'No audit lines match.', 8);
    document.getElementById('range').textContent = total === 0 ? '0 lines'
      : (offset + 1) + '–' + Math.min(offset + LIMIT, total) + ' of ' + total + ' (newest first)';
    document.getElementById('prev').disabled = offset === 0;
    document.getElementById('next').disabled = offset + LIMIT >= total;
  }

  async function verify() {
    const v = await srdma.api('GET', '/api/audit/verify');
    const chain = document.getElementById('chain');
    chain.replaceChildren(
      el('strong', { class: v.intact ? 'ok' : 'bad', id: 'chain-status',
        text: v.intact ? 'Hash chain intact' : 'Hash chain BROKEN' }),
      el('div', { class: 'mono', text: v.summary }),
      v.head ? el('div', { class: 'muted', text: 'Record the head hash outside this machine: only that shows lines cut from the end.' }) : null);
  }

  document.getElementById('filters').addEventListener('submit', (ev) => { ev.preventDefault(); offset = 0; load(); });
  document.getElementById('prev').addEventListener('click', () => { offset = Math.max(0, offset - LIMIT); load(); });
  document.getElementById('next').addEventListener('click', () => { offset += LIMIT; load(); });
  await Promise.all([load(), verify()]);
})();

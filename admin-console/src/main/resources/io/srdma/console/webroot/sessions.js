'use strict';
(async () => {
  await srdma.init();
  const { el } = srdma;
  async function load() {
    const [data, peers] = await Promise.all([srdma.api('GET', '/api/sessions'), srdma.api('GET', '/api/peers')]);
    srdma.fillTable(document.getElementById('peers'), peers.items.map((p) => el('tr', { 'data-peer': p.identity },
      el('td', { class: 'mono', text: p.identity }),
      el('td', { text: p.tenant }),
      el('td', { text: p.roles.join(', ') }),
      el('td', { class: 'num', text: p.sessions }),
      el('td', { class: 'num', text: p.liveGrants }))), 'No peers in the policy.', 5);
    srdma.fillTable(document.getElementById('rows'), data.items.map((s) => el('tr', { 'data-session': s.sessionId },
      el('td', { class: 'mono', text: s.identity }),
      el('td', { text: s.tenant }),
      el('td', { class: 'mono', text: s.sessionId }),
      el('td', { text: srdma.time(s.since) }),
      el('td', { class: 'num', text: s.epoch }),
      el('td', { class: 'num', text: srdma.bytes(s.bytesIn) }),
      el('td', { class: 'num', text: srdma.bytes(s.bytesOut) }),
      el('td', { class: 'num', text: srdma.num(s.records) }))), 'No live sessions.', 8);
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  }
  document.getElementById('refresh').addEventListener('click', load);
  await load();
  setInterval(load, 5000);
})();

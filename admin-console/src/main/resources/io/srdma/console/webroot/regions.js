'use strict';
(async () => {
  await srdma.init();
  const { el } = srdma;
  async function load() {
    const data = await srdma.api('GET', '/api/regions');
    srdma.fillTable(document.getElementById('rows'), data.items.map((r) => el('tr', {},
      el('td', { text: r.tenant }),
      el('td', { class: 'mono', text: r.name }),
      el('td', { class: 'num', text: srdma.bytes(r.size) }),
      el('td', { class: 'num', text: srdma.bytes(r.registeredBytes) }),
      el('td', { class: 'num', text: r.liveGrants }))), 'No regions in the policy.', 5);
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  }
  document.getElementById('refresh').addEventListener('click', load);
  await load();
  setInterval(load, 5000);
})();

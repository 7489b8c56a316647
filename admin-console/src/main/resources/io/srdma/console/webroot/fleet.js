'use strict';
// The fleet of a clustered deployment (docs/cluster.md): hosts, their policy hash, their grants,
// revoke on any host. A single host has no fleet and says so.
(async () => {
  const me = await srdma.init();
  const { el } = srdma;
  const box = document.getElementById('message');
  const dialog = document.getElementById('confirm');
  let pending = null;

  async function load() {
    const fleet = await srdma.api('GET', '/api/cluster');
    const link = document.getElementById('link');
    if (!fleet.clustered) {
      link.textContent = 'This host is not part of a cluster.';
      srdma.fillTable(document.getElementById('hosts'), [], 'No cluster.', 8);
      srdma.fillTable(document.getElementById('grants'), [], 'No cluster.', 8);
      return;
    }
    const l = fleet.link;
    link.textContent = 'This host: ' + l.host + ' of ' + l.prefix + ', etcd ' + l.state + ' since '
      + srdma.time(l.since) + (l.lastError ? ' (' + l.lastError + ')' : '')
      + '. Deployment policy: ' + (fleet.deploymentPolicySha256 || 'none pushed').substring(0, 12) + '.';
    link.className = l.state === 'connected' ? 'muted' : 'message bad';
    link.id = 'link';
    srdma.fillTable(document.getElementById('hosts'), fleet.hosts.map((h) => el('tr', { 'data-host': h.host },
      el('td', { class: 'mono', text: h.host }),
      el('td', {
        class: 'mono',
        text: h.policySha256.substring(0, 12)
          + (fleet.deploymentPolicySha256 && h.policySha256 !== fleet.deploymentPolicySha256 ? ' (differs)' : ''),
      }),
      el('td', { text: String(h.policyRevision) }),
      el('td', { text: srdma.time(h.applied) }),
      el('td', { text: h.sessions === null || h.sessions === undefined ? '–' : String(h.sessions) }),
      el('td', { text: String(h.liveGrants) }),
      el('td', { text: h.degraded ? 'degraded at last report' : 'ok' }),
      // pushed policies the host refused (unsigned, foreign deployment, other CA, rollback, invalid)
      el('td', {
        class: h.policyRefusals ? 'bad' : '',
        text: String(h.policyRefusals || 0) + (h.lastPolicyRefusal
          ? ' (last: ' + h.lastPolicyRefusal.reason.replace('_', ' ') + ', serial '
            + h.lastPolicyRefusal.serial + ', ' + srdma.time(h.lastPolicyRefusal.at) + ')'
          : ''),
      }))), 'No host has reported.', 8);
    const grants = await srdma.api('GET', '/api/cluster/grants');
    srdma.fillTable(document.getElementById('grants'), grants.items.map((g) => el('tr', { 'data-grant': g.host + '/' + g.id },
      el('td', { class: 'mono', text: g.host }),
      el('td', { class: 'mono', text: g.id }),
      el('td', { class: 'mono', text: g.peer }),
      el('td', { text: g.tenant + ' / ' + g.region }),
      el('td', { class: 'mono', text: '[' + g.offset + ', ' + (g.offset + g.length) + ')' }),
      el('td', { text: g.ops }),
      el('td', { text: srdma.time(g.expiresAt) }),
      el('td', { class: 'admin-only' }, me.admin ? el('button', {
        class: 'danger revoke', text: 'Revoke', 'data-grant': g.host + '/' + g.id, onclick: () => ask(g),
      }) : null))), 'No live grants in the fleet.', 8);
  }

  function ask(g) {
    pending = g;
    document.getElementById('confirm-text').textContent = 'Revoke grant ' + g.id + ' of host ' + g.host
      + ', held by ' + g.peer + ' on ' + g.tenant + '/' + g.region + '?';
    dialog.showModal();
  }

  document.getElementById('confirm-cancel').addEventListener('click', () => { pending = null; dialog.close(); });
  document.getElementById('confirm-ok').addEventListener('click', async () => {
    const g = pending;
    pending = null;
    dialog.close();
    if (!g) return;
    try {
      await srdma.api('DELETE', '/api/cluster/grants/' + encodeURIComponent(g.host) + '/' + encodeURIComponent(g.id));
      srdma.showMessage(box, 'Revoked grant ' + g.id + ' of ' + g.host + '.', true);
    } catch (e) {
      srdma.showMessage(box, 'Not revoked: ' + e.message, false);
    }
    await load();
  });
  await load();
})();

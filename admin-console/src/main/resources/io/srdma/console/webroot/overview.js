'use strict';
// Overview: counters from the live stream (server-sent events), rates from successive snapshots,
// and a two-series chart drawn on a canvas.
(async () => {
  await srdma.init();
  const HISTORY = 120;
  const points = []; // {t, bps, ops}
  let last = null;

  function set(id, text) { document.getElementById(id).textContent = text; }

  function update(s) {
    set('v-bytesMoved', srdma.bytes(s.bytesMoved));
    for (const k of ['sessions', 'liveGrants', 'recordsOpened', 'recordsRejected', 'denials',
      'remoteAccessErrors', 'authFailures', 'consoleLoginFailures']) {
      set('v-' + k, srdma.num(s[k]));
    }
    if (last && s.time > last.time) {
      const dt = (s.time - last.time) / 1000;
      const bps = Math.max(0, (s.bytesMoved - last.bytesMoved) / dt);
      const ops = Math.max(0, (s.operations - last.operations) / dt);
      set('v-throughput', srdma.bytes(bps) + '/s');
      set('v-oprate', ops.toFixed(1));
      points.push({ t: s.time, bps, ops });
      while (points.length > HISTORY) points.shift();
      draw();
    }
    last = s;
  }

  function draw() {
    const c = document.getElementById('chart');
    const ratio = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (c.width !== Math.round(w * ratio)) { c.width = Math.round(w * ratio); c.height = Math.round(h * ratio); }
    const g = c.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const pad = { l: 70, r: 50, t: 10, b: 20 };
    const pw = w - pad.l - pad.r;
    const ph = h - pad.t - pad.b;
    const maxB = Math.max(1, ...points.map((p) => p.bps)) * 1.1;
    const maxO = Math.max(1, ...points.map((p) => p.ops)) * 1.1;
    g.strokeStyle = '#dde1e8';
    g.fillStyle = '#5d6677';
    g.font = '11px system-ui, sans-serif';
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = pad.t + ph - (ph * i) / 4;
      g.beginPath(); g.moveTo(pad.l, y); g.lineTo(pad.l + pw, y); g.stroke();
      g.textAlign = 'right'; g.fillText(srdma.bytes((maxB * i) / 4) + '/s', pad.l - 6, y + 4);
      g.textAlign = 'left'; g.fillText(((maxO * i) / 4).toFixed(0), pad.l + pw + 6, y + 4);
    }
    const x = (i) => pad.l + (pw * (HISTORY - points.length + i)) / (HISTORY - 1);
    function line(color, value, max) {
      g.strokeStyle = color; g.lineWidth = 2; g.beginPath();
      points.forEach((p, i) => {
        const y = pad.t + ph - (ph * value(p)) / max;
        if (i === 0) g.moveTo(x(i), y); else g.lineTo(x(i), y);
      });
      g.stroke();
    }
    line('#2457c5', (p) => p.bps, maxB);
    line('#d9822b', (p) => p.ops, maxO);
  }

  const state = document.getElementById('live-state');
  const source = new EventSource('/api/stream');
  source.addEventListener('stats', (ev) => {
    state.textContent = 'live';
    state.className = 'ok';
    update(JSON.parse(ev.data));
  });
  source.addEventListener('error', async () => {
    state.textContent = 'reconnecting…';
    state.className = 'bad';
    try { await srdma.api('GET', '/api/me'); } catch (e) { /* api() sends a logged-out user to log in */ }
  });
  window.addEventListener('resize', draw);
})();

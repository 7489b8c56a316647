'use strict';
// Shared by every page: the API client (CSRF header on state changes), navigation, formatting.
const srdma = (() => {
  let me = null;

  async function api(method, path, body) {
    const opts = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    if (method !== 'GET' && me) {
      opts.headers['X-CSRF-Token'] = me.csrf;
    }
    const r = await fetch(path, opts);
    if (r.status === 401 && path !== '/api/login') {
      location.href = '/login.html';
      throw new Error('not logged in');
    }
    const type = r.headers.get('Content-Type') || '';
    let data = null;
    if (type.includes('json')) {
      data = await r.json();
    } else if (r.status !== 204) {
      data = await r.text();
    }
    if (!r.ok) {
      const e = new Error((data && data.message) || 'HTTP ' + r.status);
      e.status = r.status;
      e.data = data;
      throw e;
    }
    return data;
  }

  // Builds elements without innerHTML, so no data from the host is ever parsed as HTML.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.substring(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const PAGES = [
    ['/index.html', 'Overview'],
    ['/sessions.html', 'Peers & sessions'],
    ['/regions.html', 'Regions'],
    ['/grants.html', 'Grants'],
    ['/policy.html', 'Policy'],
    ['/audit.html', 'Audit'],
  ];

  async function init() {
    me = await api('GET', '/api/me');
    document.body.classList.add(me.admin ? 'admin' : 'auditor');
    const here = location.pathname === '/' ? '/index.html' : location.pathname;
    // a clustered host has a Fleet page too (docs/cluster.md); a single host's menu is unchanged
    const cluster = await api('GET', '/api/cluster');
    const pages = cluster.clustered ? PAGES.concat([['/fleet.html', 'Fleet']]) : PAGES;
    const nav = el('nav', {}, pages.map(([href, name]) =>
      el('a', { href, class: href === here ? 'active' : null, text: name })));
    const logout = el('button', { class: 'secondary', id: 'logout', text: 'Log out', onclick: async () => {
      try { await api('POST', '/api/logout'); } finally { location.href = '/login.html'; }
    } });
    const who = el('div', { class: 'who' },
      el('span', { id: 'user', text: me.user }),
      el('span', { class: 'role', id: 'role', text: me.roles.join(', ') }), logout);
    document.querySelector('header').append(el('span', { class: 'brand', text: 'secure-rdma' }), nav, who);
    return me;
  }

  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    let v = Number(n);
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v.toFixed(0) : v.toFixed(1)) + ' ' + units[i];
  }

  function num(n) { return Number(n).toLocaleString('en-US'); }

  function time(iso) {
    if (!iso) return '';
    return new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  function showMessage(box, text, ok) {
    box.textContent = text;
    box.className = 'message ' + (ok ? 'ok' : 'bad');
  }

  function fillTable(tbody, rows, emptyText, columns) {
    tbody.replaceChildren();
    if (rows.length === 0) {
      tbody.append(el('tr', {}, el('td', { colspan: String(columns), class: 'muted', text: emptyText })));
    }
    for (const r of rows) tbody.append(r);
  }

  return { api, el, init, bytes, num, time, showMessage, fillTable, me: () => me };
})();

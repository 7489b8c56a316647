'use strict';
document.getElementById('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const box = document.getElementById('message');
  const user = document.getElementById('user').value;
  const password = document.getElementById('password');
  try {
    const r = await fetch('/api/login', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ user, password: password.value }),
    });
    password.value = '';
    if (r.ok) {
      location.href = '/index.html';
      return;
    }
    const e = await r.json();
    box.textContent = e.message;
  } catch (err) {
    box.textContent = 'cannot reach the console: ' + err.message;
  }
  box.className = 'message bad';
});

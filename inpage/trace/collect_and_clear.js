async function (script, opts) {
  const result = await (@@RUN@@)(script, opts);
  try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}
  try { for (const c of document.cookie.split(';')) { const k = c.split('=')[0].trim(); if (k) document.cookie = k + '=; max-age=0; path=/'; } } catch (e) {}
  try { if (indexedDB.databases) for (const d of await indexedDB.databases()) indexedDB.deleteDatabase(d.name); } catch (e) {}
  return result;
}
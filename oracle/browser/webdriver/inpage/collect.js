const token = arguments[0];
return new Promise((res, rej) => {
  const t0 = Date.now();
  const look = () => {
    const s = window.__layoutOracleCall;
    if (s && s.token === token) s.p.then(res, rej);
    else if (Date.now() - t0 > 2000) rej(new Error('layout oracle: the call was lost after a dialog'));
    else setTimeout(look, 5);
  };
  look();
});
const pristine = {O: Object, dp: Object.defineProperty, gopd: Object.getOwnPropertyDescriptor, create: Object.create,
  J: JSON, stringify: JSON.stringify, P: Promise, PP: Promise.prototype};
pristine.then = pristine.PP.then; pristine.fin = pristine.PP.finally;
pristine.species = pristine.gopd(Promise, Symbol.species);
const unrepairable = 'layout oracle: the case replaced JSON.stringify or Promise beyond repair; WebDriver cannot return the answer';
const repair = () => {
  const desc = (v) => { const d = pristine.create(null); d.value = v; d.writable = true; d.configurable = true; d.enumerable = false; return d; };
  const fix = (o, k, d) => { try { pristine.dp(o, k, d); } catch (e) {} };
  fix(window, 'JSON', desc(pristine.J));
  fix(window, 'Promise', desc(pristine.P));
  fix(pristine.J, 'stringify', desc(pristine.stringify));
  fix(pristine.PP, 'then', desc(pristine.then));
  fix(pristine.PP, 'finally', desc(pristine.fin));
  fix(pristine.PP, 'constructor', desc(pristine.P));
  if (pristine.species) fix(pristine.P, Symbol.species, pristine.species);
  const g = pristine.gopd;
  const same = (o, k, v) => { const d = g(o, k); return !!d && d.value === v; };
  return same(window, 'JSON', pristine.J) && same(pristine.J, 'stringify', pristine.stringify) &&
    same(pristine.PP, 'then', pristine.then) && same(pristine.PP, 'finally', pristine.fin) &&
    same(pristine.PP, 'constructor', pristine.P);
};

((v, a) => typeof v === 'function' ? v(a) : v)((
@@FN@@
), @@ARG@@)
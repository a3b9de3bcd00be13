if (location.href !== 'about:blank') return {oracleNavigated: String(location.href)};

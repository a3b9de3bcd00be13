try { window['@@STALE_MARK@@'] = true; } catch (e) {}
if (location.protocol === 'http:' || location.protocol === 'https:') try { const m = document.createElement('meta'); m.name = 'referrer'; m.content = 'no-referrer'; (document.head || document.documentElement).appendChild(m); } catch (e) {}
window.location.replace(arguments[0]);
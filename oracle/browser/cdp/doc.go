// Package cdp is the route of the system Chromium over the Chrome DevTools Protocol,
// with the oracle's own client on --remote-debugging-pipe (--chromium-route=cdp, the
// default): cdproto's typed commands over the oracle's own wire, one Runtime.evaluate
// per case, and a page set up as Playwright sets up its pages, so a case sees the
// same browser on either route (docs/cdp-route.md). It imports no playwright-go.
package cdp

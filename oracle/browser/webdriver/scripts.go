package webdriver

import (
	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// oracleCallProp is the window property holding the pending call, so that a call whose
// command a dialog cut short (WebKitWebDriver dismisses it and answers null while the
// script goes on) can be collected by a second command. Non-enumerable, and replaced by
// each call rather than removed, so no property appears or vanishes mid-case.
// oracleNativesProp keeps the page's own dialog functions (see dialogPrelude).
const (
	oracleCallProp    = "__layoutOracleCall"
	oracleNativesProp = "__layoutOracleNatives"
)

// dialogPrelude replaces alert, confirm and prompt, for the duration of the call, with
// functions that answer as a dismissed dialog does (undefined, false, null): what
// Playwright does with no dialog handler, and what WebDriver's "dismiss" prompt
// behavior answers too. Real dialogs are not used during a call because WebKitWebDriver
// answers the pending command with null when one opens, and a dialog opening while a
// second command awaits the same call was seen to hang that command until its
// deadline. A dialog from a timer between calls is still a real one, which the
// session's unhandledPromptBehavior "dismiss" takes care of.
//
// The text is inpage/dialog.js, which names oracleNativesProp literally.
var dialogPrelude = inpage.Read(programs, "inpage/dialog.js")

// repairPrelude captures, before any of the case's script runs, what WebKitWebDriver's
// own in-page code (WebAutomationSessionProxy.js, in the page's world) uses to send the
// answer back after the call's promise settles: JSON.stringify, which it looks up at
// that moment, and the Promise machinery of its race/finally chain. repair() puts them
// back and says whether that worked: a case that replaced them beyond repair (a
// non-configurable window.JSON) gets a clear error, never the page's serialization of
// the answer. The walk's own answer does not depend on this: it is JSON text made by
// the case program with built-ins captured before the case ran.
//
// The text is inpage/repair.js.
var repairPrelude = inpage.Read(programs, "inpage/repair.js")

// viewportPrelude reads the viewport before the case runs and again when it ends,
// through innerWidth's and innerHeight's own getters and Reflect.apply, all taken
// before any of the case's script (a case that replaces Function.prototype.call or
// Array.prototype.join cannot fake the check or make it fail): viewportChanged() is "" when both reads are arguments[2] (the launch's
// viewport), else an error text starting with viewportChangedText. The window is
// checked before every case (Prepare), but MiniBrowser's download bar, after a case
// that downloaded, was seen to arrive later, during the next case (32767x483 in a
// reflect case): trace and reflect answers have no viewport check of
// their own, so the call's answer is withheld, and call runs the case again in a
// window put back. The text is inpage/viewport.js.
var viewportPrelude = inpage.Fill(inpage.Read(programs, "inpage/viewport.js"), "VIEWPORT_CHANGED", viewportChangedText)

// viewportChangedText begins viewportPrelude's error.
const viewportChangedText = "layout oracle: the viewport changed during the case"

// callJS is the Execute Script body of one call, filled by callScriptFor;
// navigatedJS is its prelude that answers a marker when a Load's page has
// navigated away from about:blank.
var (
	callJS      = inpage.Read(programs, "inpage/call.js")
	navigatedJS = inpage.Read(programs, "inpage/navigated.js")
)

// callScriptFor is the Execute Script body for one call, whose JSON text result
// WebDriver awaits. For a Visit it is CallExpression(fn) on arguments[1]; for a Load
// it is the case program (case.js) on arguments[1], CaseArg's value, which writes and
// settles the document itself (in a kept window, kept: the program the window holds,
// browser.CaseProgramFor). arguments[0] is the call's token. Everything here runs
// before any of the case's script (the program writes the document from a later
// task), so the callbacks below are attached through the page's pristine built-ins.
// On a page that has navigated away from about:blank, a Load returns a marker object
// instead of writing, and the Go side navigates back and retries.
//
// A LoadURL (caseURL) runs the case program too, on the page it navigated to, with no
// about:blank check: the program then settles the navigated document, not a written one.
//
// The text is inpage/call.js. Its finish restores what the preludes replaced
// after the case's script, which may have broken what restore uses; the page is reset
// after every case anyway, so a failed restore must not lose the answer.
func callScriptFor(fn string, load, caseURL, kept bool) string {
	navigated, call := "", browser.CaseProgramFor(kept)
	if load && !caseURL {
		navigated = navigatedJS
	}
	if !load && !caseURL {
		call = browser.CallExpression(fn)
	}
	return inpage.Fill(callJS, "NAVIGATED", navigated, "CALL_PROP", oracleCallProp,
		"DIALOG", dialogPrelude, "REPAIR", repairPrelude, "VIEWPORT", viewportPrelude, "CALL", call)
}

// collectScript awaits the pending call token after a dialog cut its command short.
// It is inpage/collect.js (which names oracleCallProp literally).
var collectScript = inpage.Read(programs, "inpage/collect.js")

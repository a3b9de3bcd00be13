package browser

// Scripts is the text of every in-page program the backends send besides the fn a
// caller passes: the case program (case.js), the wrappers around a walk and around
// Visit's function, WebDriver's call script for each kind of call (with its dialog and
// repair preludes), its collect script, and the fresh-page checks the backends run
// after a reset. The oracle's store hashes them into its key (oracle/stored.go), so a
// change to any of them makes answers stored before it miss.
func Scripts() []string {
	return []string{caseJS, WithCaseScript(""), CallExpression(""),
		callScriptFor("", false, false), callScriptFor("", true, false), callScriptFor("", true, true),
		collectScript, freshCheckJS, blankStateJS, replaceJS}
}

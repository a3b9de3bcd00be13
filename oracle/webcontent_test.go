package oracle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A url case's main document must be one the docroot serves: checkDocument, the first
// thing Handle does, makes any other a request error naming the "url", before any
// engine visits (here on an Oracle with only an origin, no engine). Why the docroot
// does not serve a path is origin's TestDocumentSaysWhyTheDocRootDoesNotServeIt.
func TestURLCaseOfADocumentTheDocRootDoesNotServeIsARequestError(t *testing.T) {
	check := func(o *Oracle, url string) error { return o.checkDocument(&Request{URL: &url}) }
	assert.Equal(t, errNoDocRoot, check(&Oracle{}, "/a.xht"), "no origin")
	srv, err := origin.Start("", zerolog.Nop())
	require.NoError(t, err)
	defer srv.Close()
	o := &Oracle{origin: srv}
	assert.Equal(t, errNoDocRoot, check(o, "/a.xht"), "an origin without --docroot")

	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.xht"), []byte(`<html xmlns="http://www.w3.org/1999/xhtml"/>`), 0o644))
	d, err := origin.OpenDocRoot(root)
	require.NoError(t, err)
	defer d.Close()
	srv.SetDocRoot(d)
	assert.NoError(t, check(o, "/a.xht?x=1#y"))
	err = check(o, "/dir/nope.html?x#y")
	if assert.Error(t, err) {
		assert.Equal(t, `"url": "/dir/nope.html?x#y": no such file under --docroot`, err.Error())
		assert.NotContains(t, err.Error(), root, "the docroot's own path is not told")
	}
}

// META: global=window
// Its headers file is not sent by --docroot: reported SKIP.
test(() => {}, 'never run');

// The form that asks for a keyed server's API key: a modal <dialog> of the page (#key-dialog),
// shown when an API call answers 401 (auth.js). Resolves to the key typed, or null when the
// user closes the form without one (Esc).
export function keyForm(dialog) {
  const form = dialog.querySelector('form');
  const input = dialog.querySelector('input');
  const note = dialog.querySelector('.key-note');
  return (refused) => new Promise((resolve) => {
    let settled = false;
    const settle = (value) => {
      if (settled) return;
      settled = true;
      form.removeEventListener('submit', onSubmit);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      resolve(value);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (key) settle(key);
    };
    const onClose = () => settle(null);
    note.textContent = refused
      ? 'The server refused that key. Enter the API key again:'
      : 'This server needs an API key. It is kept in this tab only, until you close it.';
    dialog.dataset.refused = refused ? 'true' : 'false';
    input.value = '';
    form.addEventListener('submit', onSubmit);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    input.focus();
  });
}

// The conversation list: select, rename (inline), delete.
export function drawSidebar(list, store, { onSelect, onDelete }) {
  const current = store.current();
  list.replaceChildren(...store.list().map((c) => {
    const li = document.createElement('li');
    li.className = c.id === current?.id ? 'conv active' : 'conv';
    li.dataset.id = c.id;
    const title = document.createElement('button');
    title.type = 'button';
    title.className = 'title';
    title.textContent = c.title;
    title.addEventListener('click', () => onSelect(c.id));
    const rename = document.createElement('button');
    rename.type = 'button';
    rename.className = 'rename';
    rename.title = 'Rename';
    rename.textContent = '✎';
    rename.addEventListener('click', () => {
      const input = document.createElement('input');
      input.className = 'rename-box';
      input.value = c.title;
      const commit = () => {
        store.rename(c.id, input.value);
        drawSidebar(list, store, { onSelect, onDelete });
      };
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') drawSidebar(list, store, { onSelect, onDelete });
      });
      input.addEventListener('blur', commit);
      li.replaceChildren(input);
      input.focus();
      input.select();
    });
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'delete';
    del.title = 'Delete';
    del.textContent = '✕';
    del.addEventListener('click', () => {
      if (confirm(`Delete "${c.title}"?`)) onDelete(c.id);
    });
    li.append(title, rename, del);
    return li;
  }));
}

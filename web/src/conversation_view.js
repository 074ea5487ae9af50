// Draws a conversation: user messages (with Edit) and replies (ReplyView, with Regenerate on
// the last one). The controller in main.js supplies what the buttons do.
import { ReplyView } from './reply.js';

function button(label, className, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

function userMessage(message, index, actions) {
  const root = document.createElement('div');
  root.className = 'msg user';
  const text = document.createElement('div');
  text.className = 'content';
  text.textContent = message.content;
  const bar = document.createElement('div');
  bar.className = 'actions';
  bar.append(button('Edit', 'edit', () => startEdit(root, message, index, actions)));
  root.append(text, bar);
  return root;
}

// Edit-and-resend: the message becomes a text box; "Send" replaces it, drops everything
// after it and asks again.
function startEdit(root, message, index, actions) {
  const box = document.createElement('textarea');
  box.className = 'edit-box';
  box.value = message.content;
  const bar = document.createElement('div');
  bar.className = 'actions';
  bar.append(
    button('Send', 'resend', () => actions.resend(index, box.value)),
    button('Cancel', 'cancel', () => actions.redraw()),
  );
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      actions.resend(index, box.value);
    } else if (e.key === 'Escape') {
      actions.redraw();
    }
  });
  root.replaceChildren(box, bar);
  box.focus();
}

// Returns the ReplyView of each assistant message, by message index.
export function drawConversation(container, conversation, actions) {
  const views = new Map();
  const nodes = [];
  const messages = conversation ? conversation.messages : [];
  messages.forEach((m, i) => {
    if (m.role === 'user') {
      nodes.push(userMessage(m, i, actions));
    } else {
      const view = new ReplyView(m, container);
      if (i === messages.length - 1 && !actions.busy())
        view.actions.append(button('Regenerate', 'regenerate', () => actions.regenerate()));
      views.set(i, view);
      nodes.push(view.root);
    }
  });
  if (!nodes.length) {
    const empty = document.createElement('div');
    empty.className = 'empty';
    empty.textContent = 'Ask anything. Thinking: on, off, or auto (duet decides per message).';
    nodes.push(empty);
  }
  container.replaceChildren(...nodes);
  return views;
}

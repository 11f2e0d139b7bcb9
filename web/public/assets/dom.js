// @ts-check
// Small DOM helpers: elements are built from data, text is always text.

/**
 * An element with attributes, properties and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any> | null} [attributes]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      element.className = value;
    } else if (name === 'style') {
      // Through the CSSOM: the page's policy refuses inline style attributes.
      element.style.cssText = String(value);
    } else if (name === 'dataset') {
      Object.assign(element.dataset, value);
    } else if (name in element && typeof value !== 'string') {
      // @ts-ignore properties such as `value`, `checked`, `inert`
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/**
 * Replaces an element's children.
 * @param {Element} parent
 * @param {...(Node | string | null | undefined | false)} children
 */
export function replace(parent, ...children) {
  parent.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false).map((child) => /** @type {Node | string} */ (child)));
}

/**
 * A short local date and time.
 * @param {string | undefined | null} stamp
 */
export function when(stamp) {
  if (!stamp) return '';
  const date = new Date(stamp);
  if (Number.isNaN(date.getTime())) return stamp;
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString([], { month: 'short', day: 'numeric' }) +
        ' ' +
        date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/**
 * A diff as lines coloured by their first character.
 * @param {string} diff
 */
export function diffView(diff) {
  const pre = el('pre', { class: 'diff', tabindex: '0', 'aria-label': 'Changes' });
  for (const line of diff.split('\n')) {
    const kind = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'remove' : line.startsWith('@') ? 'hunk' : '';
    pre.append(el('span', { class: kind ? `line ${kind}` : 'line' }, line || ' '));
  }
  return pre;
}

/**
 * The message of an error, for people.
 * @param {unknown} error
 */
export function message(error) {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Gives the focus back to what had it before a dialog opened, when that is still on the
 * page; else to the main region, so the keyboard never starts over from the document.
 * @param {Element | null} opener
 */
export function returnFocus(opener) {
  if (opener instanceof HTMLElement && opener !== document.body) {
    // A list drawn again while the dialog was open holds the same control anew.
    const again = opener.isConnected ? opener : sameControl(opener);
    if (again) {
      again.focus();
      if (document.activeElement === again) return;
    }
  }
  const main = document.getElementById('main');
  if (main) main.focus();
}

/**
 * The control on the page now that stands where `gone` stood: the same label (or, when
 * the label changed, the same tooltip) in the same session, proposal or project.
 * @param {HTMLElement} gone
 * @returns {HTMLElement | null}
 */
function sameControl(gone) {
  const label = gone.getAttribute('aria-label');
  if (!label) return null;
  const owner = /** @type {HTMLElement | null} */ (gone.closest('[data-session], [data-proposal], [data-project]'));
  const scope = owner
    ? Object.entries(owner.dataset).filter(([key]) => ['session', 'proposal', 'project'].includes(key)).map(([key, value]) => `[data-${key}="${CSS.escape(value || '')}"] `)[0] || ''
    : '';
  const tag = gone.tagName.toLowerCase();
  const same = document.querySelector(`${scope}${tag}[aria-label="${CSS.escape(label)}"]`);
  if (same instanceof HTMLElement || !owner) return /** @type {HTMLElement | null} */ (same);
  // The label may name what changed meanwhile (a chat's new title): the control with the
  // same tooltip in the same session, proposal or project is the one.
  const tooltip = gone.getAttribute('title');
  return tooltip ? document.querySelector(`${scope}${tag}[title="${CSS.escape(tooltip)}"]`) : null;
}

/**
 * Asks a yes/no question in a modal dialog.
 * @param {string} question
 * @param {string} confirmLabel
 * @returns {Promise<boolean>}
 */
export function confirmDialog(question, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = el(
      'dialog',
      { class: 'dialog', 'aria-label': question },
      el('p', null, question),
      el(
        'form',
        { method: 'dialog', class: 'dialog-actions' },
        el('button', { value: 'cancel', class: 'button' }, 'Cancel'),
        el('button', { value: 'ok', class: 'button danger' }, confirmLabel),
      ),
    );
    const opener = document.activeElement;
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
      returnFocus(opener);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * Asks for a line of text in a modal dialog.
 * @param {string} question
 * @param {string} initial
 * @returns {Promise<string | null>}
 */
export function promptDialog(question, initial) {
  return new Promise((resolve) => {
    const input = el('input', { type: 'text', value: initial, 'aria-label': question, class: 'input' });
    const dialog = el(
      'dialog',
      { class: 'dialog', 'aria-label': question },
      el('form', { method: 'dialog' },
        el('label', { class: 'field' }, el('span', null, question), input),
        el('div', { class: 'dialog-actions' },
          el('button', { value: 'cancel', class: 'button', formnovalidate: true }, 'Cancel'),
          el('button', { value: 'ok', class: 'button primary' }, 'Save'),
        ),
      ),
    );
    const opener = document.activeElement;
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok' ? input.value : null);
      dialog.remove();
      returnFocus(opener);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  });
}

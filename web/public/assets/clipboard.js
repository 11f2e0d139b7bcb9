// @ts-check
// Copying to the clipboard, with a button that says it worked.

import { icon } from './icons.js';

/**
 * Puts text on the clipboard: through the Clipboard API, else the older copy command.
 * @param {string} text
 * @returns {Promise<boolean>} whether it was copied
 */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
  }
}

/**
 * A small button that copies what `text()` returns and says so for two seconds.
 * @param {string} label the accessible name, e.g. "Copy the answer"
 * @param {() => string} text
 * @returns {HTMLButtonElement}
 */
export function copyButton(label, text) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'button subtle small copy';
  button.setAttribute('aria-label', label);
  button.title = label;
  const caption = document.createElement('span');
  caption.textContent = 'Copy';
  button.append(icon('copy'), caption);
  button.addEventListener('click', async () => {
    const copied = await copyText(text());
    caption.textContent = copied ? 'Copied' : 'Copy failed';
    button.dataset.copied = String(copied);
    setTimeout(() => {
      caption.textContent = 'Copy';
      delete button.dataset.copied;
    }, 2000);
  });
  return button;
}

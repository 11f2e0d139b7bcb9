// @ts-check
// Files attached to a message: picked, pasted or dropped anywhere on the chat, uploaded to
// the server (`attachment/upload`, kept in the data directory), shown as chips under the
// composer until sent, and under the message in the transcript.

import { el, replace, message } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {import('../../protocol').Attachment} Attachment */

/** Images small enough to preview in the composer from their own bytes. */
const PREVIEW_BYTES = 2 * 1024 * 1024;

/** @param {number} bytes */
export function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A file's content as base64 (and as a data: URL, for a preview).
 * @param {File} file
 * @returns {Promise<{ data: string, url: string }>}
 */
function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve({ url, data: url.slice(url.indexOf(',') + 1) });
    };
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/**
 * Uploads one file; the attachment to send with a message.
 * @param {Rpc} rpc
 * @param {File} file
 */
export async function uploadFile(rpc, file) {
  const { data, url } = await readFile(file);
  const uploaded = await rpc.call('attachment/upload', {
    name: file.name || 'pasted',
    mediaType: file.type || 'application/octet-stream',
    data,
  });
  const preview = file.type.startsWith('image/') && file.size <= PREVIEW_BYTES ? url : '';
  return { attachment: uploaded.attachment, bytes: uploaded.bytes, preview };
}

/**
 * The attachments of a sent message, as chips.
 * @param {Attachment[]} attachments
 * @returns {HTMLElement | null}
 */
export function attachmentList(attachments) {
  if (!attachments.length) return null;
  return el('ul', { class: 'attachments', 'aria-label': 'Attached files' },
    ...attachments.map((attachment) =>
      el('li', { class: 'attachment-chip', title: attachment.uri },
        icon('paperclip'),
        el('span', { class: 'attachment-name' }, attachment.name),
        el('span', { class: 'muted' }, attachment.mediaType),
      ),
    ),
  );
}

/** The files a message will carry, before it is sent. */
export class AttachmentTray {
  /**
   * @param {Rpc} rpc
   * @param {(error: string) => void} onError
   */
  constructor(rpc, onError) {
    this.rpc = rpc;
    this.onError = onError;
    /** @type {Array<{ attachment: Attachment, bytes: number, preview: string }>} */
    this.items = [];
    /** @type {Set<Promise<unknown>>} uploads under way */
    this.uploads = new Set();
    this.element = el('ul', { class: 'attachments tray', 'aria-label': 'Files to send', hidden: true });
    this.input = el('input', {
      type: 'file',
      multiple: true,
      class: 'visually-hidden',
      tabindex: '-1',
      'aria-hidden': 'true',
      'aria-label': 'Files to attach',
      onchange: () => {
        if (this.input.files) this.add([...this.input.files]);
        this.input.value = '';
      },
    });
    this.button = el('button', {
      class: 'button subtle attach',
      type: 'button',
      'aria-label': 'Attach files',
      title: 'Attach files (or paste them, or drop them anywhere on the chat)',
      onclick: () => this.input.click(),
    }, icon('paperclip'));
  }

  /**
   * Uploads files and adds them; a failure says which file and why, and keeps the others.
   * @param {File[]} files
   */
  add(files) {
    for (const file of files) {
      const upload = uploadFile(this.rpc, file)
        .then((item) => {
          this.items.push(item);
        })
        .catch((error) => this.onError(`Could not attach ${file.name || 'the file'}: ${message(error)}`))
        .finally(() => {
          this.uploads.delete(upload);
          this.render();
        });
      this.uploads.add(upload);
    }
    this.render();
  }

  /** Waits for the uploads under way. */
  async settled() {
    while (this.uploads.size) await Promise.allSettled([...this.uploads]);
  }

  /** Whether files wait to be sent. */
  pending() {
    return this.items.length > 0 || this.uploads.size > 0;
  }

  /** The attachments to send, emptying the tray. */
  take() {
    const attachments = this.items.map((item) => item.attachment);
    this.items = [];
    this.render();
    return attachments;
  }

  /**
   * Puts attachments back (a send that failed).
   * @param {Attachment[]} attachments
   */
  restore(attachments) {
    this.items.push(...attachments.map((attachment) => ({ attachment, bytes: 0, preview: '' })));
    this.render();
  }

  render() {
    this.element.hidden = !this.pending();
    replace(
      this.element,
      ...this.items.map((item, index) =>
        el('li', { class: 'attachment-chip' },
          item.preview ? el('img', { src: item.preview, alt: '', class: 'attachment-preview' }) : icon('paperclip'),
          el('span', { class: 'attachment-name' }, item.attachment.name),
          item.bytes ? el('span', { class: 'muted' }, sizeText(item.bytes)) : null,
          el('button', {
            class: 'button subtle small',
            type: 'button',
            'aria-label': `Remove ${item.attachment.name}`,
            onclick: () => {
              this.items.splice(index, 1);
              this.render();
            },
          }, icon('close')),
        ),
      ),
      ...(this.uploads.size ? [el('li', { class: 'attachment-chip muted', role: 'status' }, `Uploading ${this.uploads.size}…`)] : []),
    );
  }
}

/**
 * Files dropped anywhere on `area` go to `onFiles`; the area is marked while files hover.
 * @param {HTMLElement} area
 * @param {(files: File[]) => void} onFiles
 */
export function acceptDrops(area, onFiles) {
  let depth = 0;
  const carriesFiles = (/** @type {DragEvent} */ event) => Boolean(event.dataTransfer?.types.includes('Files'));
  area.addEventListener('dragenter', (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth += 1;
    area.classList.add('dropping');
  });
  area.addEventListener('dragover', (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  });
  area.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) area.classList.remove('dropping');
  });
  area.addEventListener('drop', (event) => {
    depth = 0;
    area.classList.remove('dropping');
    const files = [...(event.dataTransfer?.files ?? [])];
    if (!files.length) return;
    event.preventDefault();
    onFiles(files);
  });
}

/**
 * The files pasted into a field, if the paste carries any.
 * @param {ClipboardEvent} event
 * @returns {File[]}
 */
export function pastedFiles(event) {
  return [...(event.clipboardData?.files ?? [])];
}

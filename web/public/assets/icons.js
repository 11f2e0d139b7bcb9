// @ts-check
// One icon set, drawn inline as SVG strokes in the text's colour: no icon depends on an
// emoji font being installed. Icons are decoration; the control they sit in carries the
// accessible name.

const SVG = 'http://www.w3.org/2000/svg';

/** Each icon: path data on a 24×24 grid, stroked. */
const PATHS = {
  plus: ['M12 5v14', 'M5 12h14'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  check: ['M5 12.5l4.5 4.5L19 7'],
  edit: ['M4 20h4L19 9l-4-4L4 16v4z', 'M13.5 6.5l4 4'],
  trash: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 13h10l1-13', 'M10 11v6', 'M14 11v6'],
  theme: ['M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z', 'M12 3v18', 'M12 3a9 9 0 0 1 0 18z'],
  menu: ['M4 6h16', 'M4 12h16', 'M4 18h16'],
  left: ['M15 5l-7 7l7 7'],
  right: ['M9 5l7 7l-7 7'],
  calendar: ['M4 6h16v14H4z', 'M4 10h16', 'M8 3v4', 'M16 3v4'],
  warn: ['M12 3l10 18H2z', 'M12 10v5', 'M12 18v.5'],
  copy: ['M8 8h12v12H8z', 'M16 8V4H4v12h4'],
  retry: ['M4 12a8 8 0 1 0 2.5-5.8', 'M4 4v5h5'],
  paperclip: ['M20 11l-8.5 8.5a5 5 0 0 1-7-7L13 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L14 7'],
  search: ['M10.5 4a6.5 6.5 0 1 0 0 13a6.5 6.5 0 1 0 0-13z', 'M15.5 15.5L20 20'],
  download: ['M12 4v11', 'M7 10l5 5l5-5', 'M5 20h14'],
  pin: ['M9 4h6l-1 6l4 4H6l4-4z', 'M12 14v6'],
  archive: ['M4 5h16v4H4z', 'M5 9v10h14V9', 'M10 13h4'],
};

/** @typedef {keyof typeof PATHS} IconName */

/**
 * An icon, hidden from assistive technology.
 * @param {IconName} name
 * @returns {SVGSVGElement}
 */
export function icon(name) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', `icon icon-${name}`);
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const data of PATHS[name]) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', data);
    svg.append(path);
  }
  return svg;
}

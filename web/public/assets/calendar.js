// @ts-check
// The calendar: a week (or, on a phone, three days or one) of the configured calendars
// in the configured time zone and clock, with the changes agents propose drawn over it
// as ghost events that can be approved or rejected right there, and a bar to ask the
// agent for a change. It reads the events again when the server says a proposal
// changed, keeping its scroll position and the focus.

import { el, replace, message } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {{rpc: Rpc, app: any}} PageContext */

const DAY_MS = 86400000;
const HOUR_HEIGHT = 44;

/**
 * A calendar date (no time zone) as YYYY-MM-DD.
 * @param {Date} date a UTC-midnight date
 */
function iso(date) {
  return date.toISOString().slice(0, 10);
}

/**
 * Today's date in a time zone, as a UTC-midnight date.
 * @param {string} zone
 */
function today(zone) {
  let text;
  try {
    text = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  } catch {
    text = new Date().toISOString().slice(0, 10);
  }
  return new Date(`${text}T00:00:00Z`);
}

/**
 * The Monday of a date's week.
 * @param {Date} date
 */
function weekStart(date) {
  const weekday = (date.getUTCDay() + 6) % 7;
  return new Date(date.getTime() - weekday * DAY_MS);
}

/**
 * The wall-clock date and minutes of a time the server wrote in the calendar's zone.
 * @param {string} stamp `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]…`
 */
function wall(stamp) {
  const date = stamp.slice(0, 10);
  const hours = stamp.length > 10 ? parseInt(stamp.slice(11, 13), 10) : 0;
  const minutes = stamp.length > 10 ? parseInt(stamp.slice(14, 16), 10) : 0;
  return { date, minutes: hours * 60 + minutes };
}

/**
 * @param {number} minutes
 * @param {boolean} hour12
 */
function clock(minutes, hour12) {
  const hours = Math.floor(minutes / 60) % 24;
  const mins = String(minutes % 60).padStart(2, '0');
  if (!hour12) return `${String(hours).padStart(2, '0')}:${mins}`;
  const suffix = hours < 12 ? 'am' : 'pm';
  const twelve = hours % 12 === 0 ? 12 : hours % 12;
  return `${twelve}:${mins}${suffix}`;
}

/** The span a phone starts with, and the choices. */
const NARROW = '(max-width: 760px)';
const SPANS = [
  { days: 7, label: 'Week' },
  { days: 3, label: '3 days' },
  { days: 1, label: 'Day' },
];
/** The least height, in minutes, a ghost is drawn with: room for its title and its buttons. */
const GHOST_MINUTES = 96;
/** The least height, in minutes, an event is drawn with. */
const EVENT_MINUTES = 25;

/**
 * @typedef {{node: HTMLElement, top: number, bottom: number}} Placed
 */

/**
 * Lays items that overlap in time side by side: each cluster of overlapping items shares
 * the column's width in lanes, so none covers another.
 * @param {Placed[]} items
 */
function lanes(items) {
  items.sort((a, b) => a.top - b.top || b.bottom - a.bottom);
  /** @type {Placed[]} */
  let cluster = [];
  /** @type {number[]} */
  let laneEnds = [];
  /** @type {Map<Placed, number>} */
  const laneOf = new Map();
  let clusterEnd = -1;
  const close = () => {
    const count = laneEnds.length;
    for (const item of cluster) {
      const lane = laneOf.get(item) || 0;
      item.node.style.left = `calc(${(lane / count) * 100}% + 2px)`;
      item.node.style.width = `calc(${100 / count}% - 4px)`;
      item.node.style.right = 'auto';
    }
    cluster = [];
    laneEnds = [];
  };
  for (const item of items) {
    if (cluster.length && item.top >= clusterEnd) close();
    let lane = laneEnds.findIndex((end) => end <= item.top);
    if (lane < 0) {
      lane = laneEnds.length;
      laneEnds.push(item.bottom);
    } else {
      laneEnds[lane] = item.bottom;
    }
    laneOf.set(item, lane);
    cluster.push(item);
    clusterEnd = Math.max(cluster.length === 1 ? item.bottom : clusterEnd, item.bottom);
  }
  if (cluster.length) close();
}

export class CalendarPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    this.zone = 'UTC';
    this.hour12 = false;
    /** @type {import('../../protocol').CalendarEntry[]} */
    this.calendars = [];
    /** @type {string | undefined} */
    this.askChat = undefined;
    this.scrolled = false;
    /** @type {Date | null} */
    this.start = null;
    this.days = matchMedia(NARROW).matches ? 3 : 7;
    // Reads that overlap: only the newest one draws.
    this.generation = 0;
    this.grid = el('section', { class: 'week', 'aria-label': 'Events' });
    // Kept across redraws, so an update never moves what the user scrolled to.
    this.scroller = el('div', { class: 'week-scroll', role: 'region', tabindex: '0', 'aria-label': 'Hours of the days shown' });
    this.notes = el('div', { class: 'calendar-notes', role: 'status' });
    this.title = el('h1', null, 'Calendar');
    this.dateInput = el('input', { class: 'input date', type: 'date', 'aria-label': 'Go to date', onchange: () => this.goTo(this.dateInput.value) });
    this.spanSelect = el('select', { class: 'select span', 'aria-label': 'Days shown', onchange: () => this.setSpan(Number(this.spanSelect.value)) },
      ...SPANS.map((span) => el('option', { value: String(span.days), selected: span.days === this.days }, span.label)));
    this.ask = el('input', { class: 'input', type: 'text', placeholder: 'Ask for a change — “move Friday’s review to 3pm”', 'aria-label': 'Ask the agent for a calendar change' });
    this.askResult = el('div', { class: 'ask-result', role: 'status' });
    /** @type {string | null} */
    this.askSession = null;
  }

  async render() {
    const nav = el('div', { class: 'actions calendar-nav' },
      el('button', { class: 'button', type: 'button', 'aria-label': 'Earlier', onclick: () => this.move(-1) }, icon('left')),
      el('button', { class: 'button', type: 'button', onclick: () => this.move(0) }, 'Today'),
      el('button', { class: 'button', type: 'button', 'aria-label': 'Later', onclick: () => this.move(1) }, icon('right')),
      this.dateInput,
      this.spanSelect,
    );
    const bar = el('form', { class: 'write-bar', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.askAgent();
    } }, this.ask, el('button', { class: 'button primary', type: 'submit' }, 'Ask'));
    replace(this.grid, this.scroller);
    replace(this.host, el('header', { class: 'page-header' }, this.title, nav), bar, this.askResult, this.notes, this.grid);
    try {
      const listing = await this.rpc.call('calendar/list', {});
      this.zone = listing.timezone;
      this.hour12 = listing.hour12;
      this.calendars = listing.calendars;
    } catch (error) {
      replace(this.notes, el('p', { class: 'notice error', role: 'alert' }, `Could not read the calendars: ${message(error)}`));
      return;
    }
    // A date chosen while the calendars were read stays chosen.
    this.start = this.start || this.first(today(this.zone));
    await this.load();
  }

  /**
   * The first day shown when `date` is to be in view.
   * @param {Date} date
   */
  first(date) {
    return this.days === 7 ? weekStart(date) : date;
  }

  /** @param {number} direction -1 earlier, 1 later, 0 today */
  move(direction) {
    this.start = direction === 0
      ? this.first(today(this.zone))
      : new Date((this.start || this.first(today(this.zone))).getTime() + direction * this.days * DAY_MS);
    this.load();
  }

  /** @param {string} text YYYY-MM-DD */
  goTo(text) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return;
    const date = new Date(`${text}T00:00:00Z`);
    if (Number.isNaN(date.getTime())) return;
    this.start = this.first(date);
    this.load();
  }

  /** @param {number} days */
  setSpan(days) {
    if (![1, 3, 7].includes(days)) return;
    const anchor = this.start || today(this.zone);
    // The day in view stays in view: today when it is shown, else the first day.
    const now = today(this.zone);
    const showing = now >= anchor && now.getTime() < anchor.getTime() + this.days * DAY_MS;
    this.days = days;
    this.start = this.first(showing ? now : anchor);
    this.load();
  }

  /** The server says a proposal was staged or decided: read the days again, in place. */
  proposalChanged() {
    this.load();
  }

  async load() {
    if (!this.start) return;
    const generation = ++this.generation;
    const start = this.start;
    const days = this.days;
    const end = new Date(start.getTime() + days * DAY_MS);
    let answer;
    try {
      answer = await this.rpc.call('calendar/events', { from: iso(start), to: iso(end) });
    } catch (error) {
      replace(this.notes, el('p', { class: 'notice error', role: 'alert' }, `Could not read the events: ${message(error)}`));
      return;
    }
    if (generation !== this.generation) return;
    // A ghost being decided keeps its place; its decision reads the days again.
    if (this.grid.querySelector('.ghost button:disabled')) return;
    const synced = this.calendars.filter((calendar) => calendar.syncedAt).map((calendar) =>
      `${calendar.name} synced with its server ${new Date(calendar.syncedAt || '').toLocaleString([], { timeZone: this.zone, dateStyle: 'medium', timeStyle: 'short', hour12: this.hour12 })}.`);
    const problems = this.calendars.flatMap((calendar) => [
      ...(calendar.error ? [`${calendar.name}: ${calendar.error}`] : []),
      ...calendar.warnings.map((warning) => `${calendar.name}: ${warning}`),
    ]);
    replace(this.notes,
      el('p', { class: 'muted' }, `Times in ${this.zone}. `, ...(this.calendars.length
        ? [`${this.calendars.length} calendar${this.calendars.length === 1 ? '' : 's'}.`]
        : ['No calendar is configured: add one with ', el('code', null, 'hearth calendar add'), '.'])),
      ...synced.map((text) => el('p', { class: 'muted' }, text)),
      ...[...problems, ...answer.warnings].map((text) => el('p', { class: 'notice warn' }, text)),
    );
    this.title.textContent = this.heading(start, days);
    this.dateInput.value = iso(start);
    this.draw(start, days, answer.events, answer.proposed);
  }

  /**
   * @param {Date} start
   * @param {number} days
   */
  heading(start, days) {
    const format = (/** @type {Date} */ date, /** @type {Intl.DateTimeFormatOptions} */ options) => date.toLocaleDateString([], { timeZone: 'UTC', ...options });
    if (days === 7) return `Week of ${format(start, { month: 'long', day: 'numeric', year: 'numeric' })}`;
    if (days === 1) return format(start, { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' });
    const last = new Date(start.getTime() + (days - 1) * DAY_MS);
    return `${format(start, { month: 'short', day: 'numeric' })} – ${format(last, { month: 'short', day: 'numeric', year: 'numeric' })}`;
  }

  /**
   * What has the focus in the grid, to find again after a redraw.
   * @returns {string | null} a selector
   */
  focused() {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !this.grid.contains(active)) return null;
    const item = active.closest('.event');
    if (!(item instanceof HTMLElement)) return null;
    const date = item.closest('[data-date]');
    const day = date instanceof HTMLElement ? `[data-date="${date.dataset.date}"] ` : '';
    const key = item.dataset.proposal ? `.event[data-proposal="${item.dataset.proposal}"]` : `.event[data-uid="${CSS.escape(item.dataset.uid || '')}"]`;
    if (active === item) return `${day}${key}`;
    const buttons = [...item.querySelectorAll('button')];
    const index = buttons.indexOf(/** @type {HTMLButtonElement} */ (active));
    return index >= 0 ? `${day}${key} button:nth-of-type(${index + 1})` : `${day}${key}`;
  }

  /**
   * @param {Date} start
   * @param {number} count
   * @param {import('../../protocol').CalendarEventsResponse['events']} events
   * @param {import('../../protocol').CalendarEventsResponse['proposed']} proposed
   */
  draw(start, count, events, proposed) {
    const focus = this.focused();
    const days = Array.from({ length: count }, (_, index) => new Date(start.getTime() + index * DAY_MS));
    const todayIso = iso(today(this.zone));
    const long = (/** @type {Date} */ day) => day.toLocaleDateString([], { timeZone: 'UTC', weekday: 'long', month: 'long', day: 'numeric' });
    const header = el('div', { class: 'week-head' }, el('div', { class: 'corner' }),
      ...days.map((day) => el('div', { class: `day-head${iso(day) === todayIso ? ' today' : ''}`, title: long(day) },
        day.toLocaleDateString([], { timeZone: 'UTC', weekday: 'short', day: 'numeric' }))));
    const allDay = el('div', { class: 'all-day' }, el('div', { class: 'corner muted' }, 'all day'),
      ...days.map((day) => el('div', { class: 'all-day-cell', role: 'group', 'aria-label': `${long(day)}, all day`, dataset: { date: iso(day) } })));
    const hours = el('div', { class: 'hours', 'aria-hidden': 'true' }, ...Array.from({ length: 24 }, (_, hour) => el('div', { class: 'hour', style: `height:${HOUR_HEIGHT}px` }, clock(hour * 60, this.hour12))));
    const columns = days.map((day) => el('div', { class: `day${iso(day) === todayIso ? ' today' : ''}`, role: 'group', 'aria-label': long(day), dataset: { date: iso(day) }, style: `height:${HOUR_HEIGHT * 24}px` }));
    const body = el('div', { class: 'week-body' }, hours, ...columns);
    /** @type {Map<HTMLElement, Placed[]>} */
    const placed = new Map(columns.map((column) => [column, []]));

    /**
     * @param {{start: string, end: string, allDay: boolean, title: string}} item
     * @param {(date: string) => HTMLElement} make
     * @param {number} least the least height drawn, in minutes
     */
    const place = (item, make, least) => {
      if (item.allDay) {
        const first = item.start.slice(0, 10);
        const last = item.end.slice(0, 10);
        for (const cell of allDay.querySelectorAll('.all-day-cell')) {
          const date = /** @type {HTMLElement} */ (cell).dataset.date || '';
          // An all-day event's end date is exclusive.
          if (date >= first && (date < last || (date === first && last <= first))) cell.append(make(date));
        }
        return;
      }
      const from = wall(item.start);
      const to = wall(item.end);
      for (const column of columns) {
        const date = column.dataset.date || '';
        if (date < from.date || date > to.date) continue;
        const top = date === from.date ? from.minutes : 0;
        const bottom = date === to.date ? to.minutes : 24 * 60;
        if (bottom <= top && !(date === from.date && to.date === from.date)) continue;
        const node = make(date);
        const drawn = Math.min(Math.max(bottom, top + least), 24 * 60);
        node.style.top = `${(top / 60) * HOUR_HEIGHT}px`;
        node.style.height = `${((drawn - top) / 60) * HOUR_HEIGHT - 2}px`;
        column.append(node);
        placed.get(column)?.push({ node, top, bottom: drawn });
      }
    };

    // Each calendar's own colour (as its server or the configuration names it).
    const colours = new Map(this.calendars
      .filter((calendar) => calendar.color && /^#[0-9a-fA-F]{3,8}$/.test(calendar.color))
      .map((calendar) => [calendar.id, calendar.color || '']));
    for (const event of events) {
      place(event, () => {
        const node = el('div', {
          class: 'event',
          tabindex: '0',
          dataset: { uid: event.uid, calendar: event.calendar },
          title: `${event.title}${event.location ? ` — ${event.location}` : ''}`,
        }, el('span', { class: 'event-time' }, event.allDay ? '' : `${clock(wall(event.start).minutes, this.hour12)} `), el('span', { class: 'event-title' }, event.title));
        const colour = colours.get(event.calendar);
        if (colour) node.style.setProperty('--calendar', colour);
        return node;
      }, EVENT_MINUTES);
    }
    for (const ghost of proposed) {
      place(ghost, () => this.ghost(ghost), GHOST_MINUTES);
    }
    for (const items of placed.values()) lanes(items);
    const top = this.scroller.scrollTop;
    this.scroller.style.setProperty('--days', String(count));
    replace(this.scroller, el('div', { class: 'week-top' }, header, allDay), body);
    if (!this.scrolled) {
      this.scroller.scrollTop = 7 * HOUR_HEIGHT;
      this.scrolled = true;
    } else {
      this.scroller.scrollTop = top;
    }
    if (focus) {
      const again = this.scroller.querySelector(focus);
      if (again instanceof HTMLElement) again.focus({ preventScroll: true });
    }
  }

  /** @param {import('../../protocol').CalendarEventsResponse['proposed'][number]} ghost */
  ghost(ghost) {
    const error = el('span', { class: 'card-error', role: 'alert', hidden: true });
    /** @param {'approve' | 'reject'} decision */
    const decide = async (decision) => {
      approve.disabled = true;
      reject.disabled = true;
      try {
        if (decision === 'approve') await this.rpc.call('proposal/approve', { proposalId: ghost.proposalId, payloadHash: ghost.payloadHash });
        else await this.rpc.call('proposal/reject', { proposalId: ghost.proposalId });
        this.app.countPending();
        // Decided: the ghost goes, and the days are read again.
        node.remove();
        await this.load();
      } catch (failure) {
        error.textContent = message(failure);
        error.hidden = false;
        approve.disabled = false;
        reject.disabled = false;
      }
    };
    const approve = el('button', { class: 'button primary small icon-button', type: 'button', 'aria-label': `Approve: ${ghost.summary}`, title: 'Approve', onclick: () => decide('approve') }, icon('check'));
    const reject = el('button', { class: 'button danger small icon-button', type: 'button', 'aria-label': `Reject: ${ghost.summary}`, title: 'Reject', onclick: () => decide('reject') }, icon('close'));
    const verb = ghost.action === 'create' ? 'New' : ghost.action === 'delete' ? 'Remove' : 'Move';
    const node = el('div', { class: `event ghost ${ghost.action}`, tabindex: '0', title: ghost.summary, dataset: { proposal: ghost.proposalId, hash: ghost.payloadHash } },
      el('span', { class: 'event-title' }, `${verb}: ${ghost.title}`),
      el('span', { class: 'ghost-actions' }, approve, reject),
      error,
    );
    return node;
  }

  async askAgent() {
    const text = this.ask.value.trim();
    if (!text) return;
    try {
      // One calendar conversation, reused: asking again adds to it.
      const { session: asked, chat } = this.askSession && this.askChat ? { session: this.askSession, chat: this.askChat } : await this.app.calendarChat();
      this.askSession = asked;
      this.askChat = chat;
      await this.rpc.call('chat/queue', { chat, message: { text } });
      this.ask.value = '';
      const session = this.askSession;
      replace(this.askResult, el('p', { class: 'notice ok' }, 'Asked. Changes it proposes appear here as dashed events to approve. ',
        el('a', { href: '#/', onclick: (/** @type {Event} */ event) => {
          event.preventDefault();
          this.app.openSession(session);
        } }, 'Open the conversation')));
    } catch (error) {
      replace(this.askResult, el('p', { class: 'notice error', role: 'alert' }, `Could not ask: ${message(error)}`));
    }
  }

  leave() {
    this.generation += 1;
  }
}

// @ts-check
// The calendar: a week of the configured calendars in the configured time zone and
// clock, with the changes agents propose drawn over it as ghost events that can be
// approved or rejected right there, and a bar to ask the agent for a change.

import { el, replace, message } from './dom.js';

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
    this.grid = el('div', { class: 'week', role: 'grid', 'aria-label': 'Week' });
    this.notes = el('div', { class: 'calendar-notes', role: 'status' });
    this.title = el('h1', null, 'Calendar');
    this.ask = el('input', { class: 'input', type: 'text', placeholder: 'Ask for a change — “move Friday’s review to 3pm”', 'aria-label': 'Ask the agent for a calendar change' });
    this.askResult = el('div', { class: 'ask-result', role: 'status' });
    /** @type {string | null} */
    this.askSession = null;
    this.timer = setInterval(() => this.load(), 4000);
  }

  async render() {
    const nav = el('div', { class: 'actions' },
      el('button', { class: 'button', type: 'button', 'aria-label': 'Previous week', onclick: () => this.move(-7) }, '‹'),
      el('button', { class: 'button', type: 'button', onclick: () => this.move(0) }, 'Today'),
      el('button', { class: 'button', type: 'button', 'aria-label': 'Next week', onclick: () => this.move(7) }, '›'),
    );
    const bar = el('form', { class: 'write-bar', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.askAgent();
    } }, this.ask, el('button', { class: 'button primary', type: 'submit' }, 'Ask'));
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
    this.start = weekStart(today(this.zone));
    await this.load();
  }

  /** @param {number} days */
  move(days) {
    this.start = days === 0 ? weekStart(today(this.zone)) : new Date((this.start || weekStart(today(this.zone))).getTime() + days * DAY_MS);
    this.load();
  }

  async load() {
    if (!this.start) return;
    const start = this.start;
    const end = new Date(start.getTime() + 7 * DAY_MS);
    let answer;
    try {
      answer = await this.rpc.call('calendar/events', { from: iso(start), to: iso(end) });
    } catch (error) {
      replace(this.notes, el('p', { class: 'notice error', role: 'alert' }, `Could not read the events: ${message(error)}`));
      return;
    }
    if (this.start !== start) return;
    // A card being decided keeps its place.
    if (this.grid.querySelector('.ghost button:disabled')) return;
    const synced = this.calendars.filter((calendar) => calendar.syncedAt).map((calendar) =>
      `${calendar.name} synced with its server ${new Date(calendar.syncedAt || '').toLocaleString([], { timeZone: this.zone, dateStyle: 'medium', timeStyle: 'short', hour12: this.hour12 })}.`);
    const problems = this.calendars.flatMap((calendar) => [
      ...(calendar.error ? [`${calendar.name}: ${calendar.error}`] : []),
      ...calendar.warnings.map((warning) => `${calendar.name}: ${warning}`),
    ]);
    replace(this.notes,
      el('p', { class: 'muted' }, `Times in ${this.zone}. `, this.calendars.length ? `${this.calendars.length} calendar${this.calendars.length === 1 ? '' : 's'}.` : 'No calendar is configured: add one with `hearth calendar add`.'),
      ...synced.map((text) => el('p', { class: 'muted' }, text)),
      ...[...problems, ...answer.warnings].map((text) => el('p', { class: 'notice warn' }, text)),
    );
    this.title.textContent = `Week of ${start.toLocaleDateString([], { timeZone: 'UTC', month: 'long', day: 'numeric', year: 'numeric' })}`;
    this.draw(start, answer.events, answer.proposed);
  }

  /**
   * @param {Date} start
   * @param {import('../../protocol').CalendarEventsResponse['events']} events
   * @param {import('../../protocol').CalendarEventsResponse['proposed']} proposed
   */
  draw(start, events, proposed) {
    const days = Array.from({ length: 7 }, (_, index) => new Date(start.getTime() + index * DAY_MS));
    const todayIso = iso(today(this.zone));
    const header = el('div', { class: 'week-head', role: 'row' }, el('div', { class: 'corner' }),
      ...days.map((day) => el('div', { class: `day-head${iso(day) === todayIso ? ' today' : ''}`, role: 'columnheader' },
        day.toLocaleDateString([], { timeZone: 'UTC', weekday: 'short', day: 'numeric' }))));
    const allDay = el('div', { class: 'all-day', role: 'row' }, el('div', { class: 'corner muted' }, 'all day'),
      ...days.map((day) => el('div', { class: 'all-day-cell', dataset: { date: iso(day) } })));
    const hours = el('div', { class: 'hours' }, ...Array.from({ length: 24 }, (_, hour) => el('div', { class: 'hour', style: `height:${HOUR_HEIGHT}px` }, clock(hour * 60, this.hour12))));
    const columns = days.map((day) => el('div', { class: `day${iso(day) === todayIso ? ' today' : ''}`, role: 'gridcell', dataset: { date: iso(day) }, style: `height:${HOUR_HEIGHT * 24}px` }));
    const body = el('div', { class: 'week-body' }, hours, ...columns);

    /**
     * @param {{start: string, end: string, allDay: boolean, title: string}} item
     * @param {(date: string) => HTMLElement} make
     */
    const place = (item, make) => {
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
        node.style.top = `${(top / 60) * HOUR_HEIGHT}px`;
        node.style.height = `${Math.max(((Math.max(bottom, top + 15) - top) / 60) * HOUR_HEIGHT - 2, 18)}px`;
        column.append(node);
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
      });
    }
    for (const ghost of proposed) {
      place(ghost, () => this.ghost(ghost));
    }
    replace(this.grid, header, allDay, el('div', { class: 'week-scroll' }, body));
    const scroll = this.grid.querySelector('.week-scroll');
    if (scroll && !this.scrolled) {
      scroll.scrollTop = 7 * HOUR_HEIGHT;
      this.scrolled = true;
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
        // Decided: the ghost goes, and the week is read again.
        node.remove();
        await this.load();
      } catch (failure) {
        error.textContent = message(failure);
        error.hidden = false;
        approve.disabled = false;
        reject.disabled = false;
      }
    };
    const approve = el('button', { class: 'button primary small', type: 'button', 'aria-label': `Approve: ${ghost.summary}`, onclick: () => decide('approve') }, '✓');
    const reject = el('button', { class: 'button danger small', type: 'button', 'aria-label': `Reject: ${ghost.summary}`, onclick: () => decide('reject') }, '✕');
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
    clearInterval(this.timer);
  }
}

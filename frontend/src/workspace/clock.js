// Visible time on one assignment: counts only while the tab is shown
// (document.visibilityState), carried over reloads through ``startMs``.

export class VisibleClock {
  constructor(startMs) {
    this.total = startMs || 0;
    this.since = document.visibilityState === "visible" ? performance.now() : null;
    this.onChange = () => {
      if (document.visibilityState === "visible") {
        if (this.since === null) this.since = performance.now();
      } else {
        this.total = this.elapsedMs();
        this.since = null;
      }
    };
    document.addEventListener("visibilitychange", this.onChange);
  }

  /** Milliseconds the page was visible on this assignment. */
  elapsedMs() {
    return Math.round(this.total + (this.since === null ? 0 : performance.now() - this.since));
  }

  stop() {
    this.total = this.elapsedMs();
    this.since = null;
    document.removeEventListener("visibilitychange", this.onChange);
  }
}

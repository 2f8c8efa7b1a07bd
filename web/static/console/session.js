// The session: whether auth is on, who is signed in, and the token. The
// token lives in sessionStorage (this tab only, gone with it). The
// password is kept in memory only, to get a new token before the old one
// expires; after a reload it is gone, and the user signs in again when
// the stored token runs out.

const STORAGE_KEY = "httpkv.session";
/** Renew when this share of the token's lifetime has passed. */
const RENEW_AT = 0.75;

export class Session {
  constructor(storage = window.sessionStorage) {
    this.storage = storage;
    this.enabled = false;
    this.name = "";
    this.root = true; // with auth off, everyone may do everything
    this.roles = [];
    this.tokenValue = "";
    this.expiresAt = 0;
    this.password = null;
    this.timer = 0;
    this.listeners = new Set();
    this.store = null;
    this.renewing = null;
  }

  /** token returns the bearer token, or "" when there is none or it has expired. */
  token() {
    return this.tokenValue && Date.now() < this.expiresAt ? this.tokenValue : "";
  }

  /** signedIn reports whether calls can be made: auth is off, or a token is held. */
  signedIn() {
    return !this.enabled || this.token() !== "";
  }

  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit() {
    for (const fn of this.listeners) fn(this);
  }

  /** start learns whether auth is on and takes up a token this tab stored before. */
  async start(store) {
    this.store = store;
    const st = await store.authStatus().catch(() => ({ enabled: false }));
    this.enabled = !!st.enabled;
    if (this.enabled) {
      try {
        const saved = JSON.parse(this.storage.getItem(STORAGE_KEY) || "null");
        if (saved && saved.token && saved.expiresAt > Date.now() + 5000) {
          this.name = saved.name;
          this.tokenValue = saved.token;
          this.expiresAt = saved.expiresAt;
          this.schedule(saved.ttl || 0);
        }
      } catch {
        this.storage.removeItem(STORAGE_KEY);
      }
    }
    await this.learnRole();
    this.emit();
  }

  /** signIn trades a name and password for a token; it throws the ApiError of a refusal. */
  async signIn(name, password) {
    const res = await this.store.token(name, password);
    this.name = name;
    this.password = password;
    this.accept(res);
    await this.learnRole();
    this.emit();
  }

  accept({ token, ttl }) {
    this.tokenValue = token;
    this.expiresAt = Date.now() + ttl * 1000;
    this.storage.setItem(STORAGE_KEY, JSON.stringify({ name: this.name, token, expiresAt: this.expiresAt, ttl }));
    this.schedule(ttl);
  }

  schedule(ttl) {
    clearTimeout(this.timer);
    const left = this.expiresAt - Date.now();
    const at = ttl > 0 ? Math.min(left - 2000, ttl * 1000 * RENEW_AT) : left - 30000;
    this.timer = setTimeout(() => this.renew(), Math.max(1000, at));
  }

  /** renew gets a new token with the password held in memory; without one, the session ends at expiry. */
  async renew() {
    if (!this.password) {
      this.timer = setTimeout(() => this.end(), Math.max(0, this.expiresAt - Date.now()));
      return;
    }
    try {
      this.accept(await this.store.token(this.name, this.password));
      this.emit();
    } catch (e) {
      if (e.status === 401) this.end();
      else this.timer = setTimeout(() => this.renew(), 5000);
    }
  }

  /** learnRole finds out whether the user is root: only root may read a user. */
  async learnRole() {
    this.roles = [];
    if (!this.enabled) {
      this.root = true;
      return;
    }
    if (!this.token()) {
      this.root = false;
      return;
    }
    try {
      const u = await this.store.user(this.name);
      this.root = true;
      this.roles = u.roles || [];
    } catch {
      this.root = false;
    }
  }

  /**
   * rejected is told of a 401: the token is no longer good (tokens do not
   * survive a server restart). With the password in memory a new token is
   * fetched at once; without, the session ends and the page asks for a
   * sign-in.
   */
  rejected() {
    if (!this.enabled || !this.tokenValue) return;
    if (!this.password) {
      this.end();
      return;
    }
    if (this.renewing) return;
    this.renewing = this.renew().finally(() => {
      this.renewing = null;
    });
  }

  /** end forgets the token, as signing out does, and tells the page. */
  end() {
    clearTimeout(this.timer);
    this.tokenValue = "";
    this.expiresAt = 0;
    this.password = null;
    this.storage.removeItem(STORAGE_KEY);
    this.emit();
  }

  signOut() {
    this.name = "";
    this.end();
  }

  /** refresh reads whether auth is on again, after root turned it on or off. */
  async refresh() {
    const st = await this.store.authStatus();
    this.enabled = !!st.enabled;
    await this.learnRole();
    this.emit();
  }
}

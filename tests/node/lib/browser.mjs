// Debian's chromium, headless, driven by playwright-core (never a browser playwright
// downloads). Every request the page makes is recorded; any that would leave this machine's
// server is aborted and listed, so a test can assert that none was attempted.
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.DUET_CHROMIUM || '/usr/bin/chromium';

export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--no-first-run'],
  });
}

// A browser context whose requests are all recorded in `urls`; those not to `origin` are
// aborted and also recorded in `foreign`. Page errors and console errors are collected too.
export async function recordingContext(browser, origin, options = {}) {
  const context = await browser.newContext(options);
  const log = { urls: [], foreign: [], errors: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    log.urls.push(url);
    if (url === origin || url.startsWith(origin + '/')) return route.continue();
    log.foreign.push(url);
    return route.abort();
  });
  context.on('weberror', (e) => log.errors.push(`page error: ${e.error().message}`));
  context.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(`console: ${m.text()}`);
  });
  return { context, log };
}

export function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

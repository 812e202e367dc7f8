// What the explorer reads off a page, in one evaluation: the facts of seed 001 §6's fingerprint
// (forms, links, tag structure; never texts or values), the candidate actions with selectors,
// and what test ideas are drawn from. Returns a JSON string.
(() => {
  const visible = (el) => {
    if (!(el instanceof Element)) return false;
    if (el.closest('[hidden],[aria-hidden="true"]')) return false;
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return false;
    return el.getClientRects().length > 0;
  };
  // Ids that look generated (digits or long random runs) do not name an element across visits.
  const stableId = (id) => id && /^[A-Za-z][\w-]{0,40}$/.test(id) && !/\d{3,}/.test(id);
  const selector = (el) => {
    if (stableId(el.id)) return '#' + CSS.escape(el.id);
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      if (stableId(node.id)) { parts.unshift('#' + CSS.escape(node.id)); break; }
      let part = node.tagName.toLowerCase();
      const name = node.getAttribute('name');
      if (name && /^(input|select|textarea|form|button)$/.test(part)) {
        part += `[name="${CSS.escape(name)}"]`;
      } else if (node.parentElement) {
        const same = [...node.parentElement.children].filter((c) => c.tagName === node.tagName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      node = node.parentElement;
    }
    return parts.join(' > ');
  };
  const label = (el) => {
    const text = (el.innerText || el.value || '').trim().replace(/\s+/g, ' ');
    return (text || el.getAttribute('aria-label') || el.getAttribute('title') ||
      el.getAttribute('placeholder') || el.getAttribute('name') || el.getAttribute('alt') || '').slice(0, 80);
  };
  const fieldLabel = (f) => {
    if (f.id) {
      const l = document.querySelector(`label[for="${CSS.escape(f.id)}"]`);
      if (l) return l.innerText.trim();
    }
    const wrap = f.closest('label');
    return wrap ? wrap.innerText.trim() : '';
  };
  const skip = /^(script|style|noscript|template|svg|iframe|canvas|br|hr|meta|link)$/;
  // The tag structure of what is visible: texts ignored, runs of alike siblings folded to one
  // (a list of 5 items and of 6 is one structure), and which tab or item is selected kept.
  const structure = (el) => {
    const tag = el.tagName.toLowerCase();
    const marks = ['aria-selected', 'aria-current', 'aria-expanded', 'open']
      .filter((a) => { const v = el.getAttribute(a); return v !== null && v !== 'false'; });
    let out = tag + (marks.length ? '*' : '');
    const kids = [];
    for (const c of el.children) {
      if (skip.test(c.tagName.toLowerCase()) || !visible(c)) continue;
      const s = structure(c);
      if (kids[kids.length - 1] !== s) kids.push(s);
    }
    if (kids.length) out += '(' + kids.join(',') + ')';
    return out;
  };
  const forms = [...document.forms].filter(visible).map((form) => {
    const fields = [...form.elements]
      .filter((f) => /^(input|select|textarea)$/i.test(f.tagName) && visible(f) &&
        !/^(hidden|submit|button|reset|image)$/i.test(f.type))
      .map((f) => ({
        selector: selector(f), name: f.name || '', type: (f.type || f.tagName).toLowerCase(),
        required: !!f.required, maxlength: f.maxLength > 0 ? f.maxLength : null,
        min: f.min || null, max: f.max || null, pattern: f.pattern || null,
        label: fieldLabel(f) || f.placeholder || f.name || '',
      }));
    const submit = form.querySelector('button:not([type=button]):not([type=reset]),input[type=submit],input[type=image]');
    return {
      selector: selector(form), method: (form.getAttribute('method') || 'get').toLowerCase(),
      action: form.action || location.href, id: form.id || '', name: form.getAttribute('name') || '',
      classes: form.className || '', fields,
      submit: submit && visible(submit) ? { selector: selector(submit), text: label(submit) } : null,
    };
  });
  const links = [...document.querySelectorAll('a[href]')].filter(visible).map((a) => ({
    selector: selector(a), href: a.href, text: label(a),
    in_nav: !!a.closest('nav,header,[role=navigation]'),
    attrs: [a.id, a.className, a.getAttribute('rel') || '', a.getAttribute('data-action') || ''].join(' '),
  }));
  // Buttons outside forms; one tied to a form by its form= attribute sends that form.
  const buttons = [...document.querySelectorAll('button,input[type=button],input[type=submit],[role=button],[onclick]')]
    .filter((b) => visible(b) && b.tagName !== 'A' && !b.closest('form'))
    .map((b) => ({
      selector: selector(b), text: label(b),
      attrs: [b.id, b.className, b.getAttribute('name') || '', b.getAttribute('data-action') || ''].join(' '),
      form_method: b.form ? (b.form.getAttribute('method') || 'get').toLowerCase() : '',
      form_login: !!(b.form && b.form.querySelector('input[type=password]')),
    }));
  // Which tab, item or panel is selected or open: part of a state even where the address is not.
  const selected = [...document.querySelectorAll('[aria-selected=true],[aria-current]:not([aria-current=false]),[aria-expanded=true],details[open]')]
    .filter(visible).map(selector);
  const headings = [...document.querySelectorAll('h1,h2')].filter(visible)
    .map((h) => h.innerText.trim()).filter((t) => t).slice(0, 4);
  const all = document.querySelectorAll('*');
  const images = [...document.images].filter(visible);
  return JSON.stringify({
    url: location.href,
    title: document.title || '',
    headings,
    selected,
    forms,
    links,
    buttons,
    structure: document.body ? structure(document.body) : '',
    scroll_height: document.documentElement.scrollHeight,
    viewport_height: window.innerHeight,
    element_count: all.length,
    images_without_alt: images.filter((i) => !i.hasAttribute('alt')).map(selector).slice(0, 20),
    unlabelled_fields: forms.flatMap((f) => f.fields).filter((f) => !f.label).map((f) => f.selector).slice(0, 20),
    text: ((document.querySelector('main') || document.body || {}).innerText || '').slice(0, 400),
  });
})()

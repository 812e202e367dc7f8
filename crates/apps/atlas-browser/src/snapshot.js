// What the explorer reads off a page, in one evaluation: the facts of seed 001 §6's fingerprint
// (forms, links, tag structure; never texts or values), the candidate actions with selectors,
// and what test ideas are drawn from. Returns a JSON string.
//
// It runs in an isolated world (the page's scripts cannot change what it calls), and it reads
// the DOM only through the prototypes' own methods and attributes: a form's `action`, `id` or
// `getAttribute` can be one of its fields (`<input name="action">`), `document.forms` or
// `document.body` a named image, an SVG link's `href` an object. Every value it returns is a
// well-formed string, and what it reads is bounded, so no page makes it fail or run long.
(() => {
  const MAX_LINKS = 1000, MAX_BUTTONS = 300, MAX_FORMS = 50, MAX_FIELDS = 60, MAX_NODES = 20000;
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const call = (fn) => (self, ...args) => fn.apply(self, args);
  const $attr = call(Element.prototype.getAttribute);
  const $has = call(Element.prototype.hasAttribute);
  const $closest = call(Element.prototype.closest);
  const $matches = call(Element.prototype.matches);
  const $rects = call(Element.prototype.getClientRects);
  const $all = (root, sel) => Array.from((root === document ? Document : Element).prototype.querySelectorAll.call(root, sel));
  const $one = (root, sel) => (root === document ? Document : Element).prototype.querySelector.call(root, sel);
  const $tag = call(getter(Element.prototype, 'localName'));
  const $children = call(getter(Element.prototype, 'children'));
  const $parent = call(getter(Node.prototype, 'parentElement'));
  const $prev = call(getter(Element.prototype, 'previousElementSibling'));
  const $text = call(getter(Node.prototype, 'textContent'));
  const $innerText = call(getter(HTMLElement.prototype, 'innerText'));
  const baseURI = getter(Node.prototype, 'baseURI').call(document);
  const body = getter(Document.prototype, 'body').call(document);
  const root = getter(Document.prototype, 'documentElement').call(document);
  const str = (v) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));
  const attr = (el, name) => str($attr(el, name));
  const absolute = (raw) => { try { return new URL(raw, baseURI).href; } catch (_) { return ''; } };
  const textOf = (el) => str(el instanceof HTMLElement ? $innerText(el) : $text(el));
  const visible = (el) => {
    if (!(el instanceof Element)) return false;
    if ($closest(el, '[hidden],[aria-hidden="true"]')) return false;
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return false;
    return $rects(el).length > 0;
  };
  // Ids that look generated (digits or long random runs) do not name an element across visits.
  const stableId = (id) => id && /^[A-Za-z][\w-]{0,40}$/.test(id) && !/\d{3,}/.test(id);
  const selector = (el) => {
    if (stableId(attr(el, 'id'))) return '#' + CSS.escape(attr(el, 'id'));
    const parts = [];
    let node = el;
    while (node && node !== root && node instanceof Element) {
      const id = attr(node, 'id');
      if (stableId(id)) { parts.unshift('#' + CSS.escape(id)); break; }
      const tag = $tag(node);
      let part = CSS.escape(tag);
      const name = attr(node, 'name');
      if (name && /^(input|select|textarea|form|button)$/.test(tag)) {
        part += `[name="${CSS.escape(name)}"]`;
      } else if ($parent(node)) {
        let index = 1, same = false;
        for (let s = $prev(node); s; s = $prev(s)) if ($tag(s) === tag) index++;
        for (const c of $children($parent(node))) if (c !== node && $tag(c) === tag) { same = true; break; }
        if (same) part += `:nth-of-type(${index})`;
      }
      parts.unshift(part);
      node = $parent(node);
    }
    return parts.join(' > ');
  };
  const label = (el) => {
    const value = el instanceof HTMLInputElement || el instanceof HTMLButtonElement ? str(el.value) : '';
    const text = (textOf(el).slice(0, 2000) || value).trim().replace(/\s+/g, ' ');
    return (text || attr(el, 'aria-label') || attr(el, 'title') || attr(el, 'placeholder') ||
      attr(el, 'name') || attr(el, 'alt')).slice(0, 80);
  };
  const fieldLabel = (f) => {
    const id = attr(f, 'id');
    if (id) {
      const l = $one(document, `label[for="${CSS.escape(id)}"]`);
      if (l) return textOf(l).trim().slice(0, 200);
    }
    const wrap = $closest(f, 'label');
    return wrap ? textOf(wrap).trim().slice(0, 200) : '';
  };
  const skip = /^(script|style|noscript|template|svg|iframe|canvas|br|hr|meta|link)$/;
  // The tag structure of what is visible: texts ignored, runs of alike siblings folded to one
  // (a list of 5 items and of 6 is one structure), and which tab or item is selected kept.
  // Bounded in depth and in elements visited: past that, the rest is one mark.
  let budget = MAX_NODES;
  const structure = (el, depth) => {
    const tag = $tag(el);
    const marks = ['aria-selected', 'aria-current', 'aria-expanded', 'open']
      .filter((a) => { const v = $attr(el, a); return v !== null && v !== 'false'; });
    let out = tag + (marks.length ? '*' : '');
    if (depth > 200 || --budget < 0) return out + '(…)';
    const kids = [];
    for (const c of $children(el)) {
      if (skip.test($tag(c)) || !visible(c)) continue;
      const s = structure(c, depth + 1);
      if (kids[kids.length - 1] !== s) kids.push(s);
    }
    if (kids.length) out += '(' + kids.join(',') + ')';
    return out;
  };
  const method = (form) => (attr(form, 'method') || 'get').toLowerCase();
  const forms = $all(document, 'form').filter(visible).slice(0, MAX_FORMS).map((form) => {
    const fields = $all(form, 'input,select,textarea')
      .filter((f) => visible(f) && !/^(hidden|submit|button|reset|image)$/i.test(str(f.type)))
      .slice(0, MAX_FIELDS)
      .map((f) => ({
        selector: selector(f), name: attr(f, 'name'), type: (str(f.type) || $tag(f)).toLowerCase(),
        required: $has(f, 'required'), maxlength: f.maxLength > 0 ? Number(f.maxLength) : null,
        min: attr(f, 'min') || null, max: attr(f, 'max') || null, pattern: attr(f, 'pattern') || null,
        label: fieldLabel(f) || attr(f, 'placeholder') || attr(f, 'name'),
        // The page's own default (its value attribute, a text area's text): sent as it is.
        prefilled: /^(text|search|textarea|email|url|tel|number)$/.test((str(f.type) || $tag(f)).toLowerCase())
          && ($tag(f) === 'textarea' ? str($text(f)) : attr(f, 'value')).trim() !== '',
      }));
    const submit = $one(form, 'button:not([type=button]):not([type=reset]),input[type=submit],input[type=image]');
    return {
      selector: selector(form), method: method(form),
      action: absolute(attr(form, 'action') || getter(Document.prototype, 'URL').call(document)),
      id: attr(form, 'id'), name: attr(form, 'name'), classes: attr(form, 'class'), fields,
      submit: submit && visible(submit) ? { selector: selector(submit), text: label(submit) } : null,
    };
  });
  const links = [];
  for (const a of $all(document, 'a[href], a[*|href]')) {
    if (links.length >= MAX_LINKS) break;
    if (!visible(a)) continue;
    const raw = $attr(a, 'href') ?? a.getAttributeNS('http://www.w3.org/1999/xlink', 'href');
    const href = absolute(str(raw));
    if (!href) continue;
    links.push({
      selector: selector(a), href, text: label(a),
      in_nav: !!$closest(a, 'nav,header,[role=navigation]'),
      attrs: [attr(a, 'id'), attr(a, 'class'), attr(a, 'rel'), attr(a, 'data-action')].join(' '),
    });
  }
  // Buttons outside forms; one tied to a form by its form= attribute sends that form.
  const buttons = [];
  for (const b of $all(document, 'button,input[type=button],input[type=submit],[role=button],[onclick]')) {
    if (buttons.length >= MAX_BUTTONS) break;
    if ($tag(b) === 'a' || $closest(b, 'form') || !visible(b)) continue;
    const form = b instanceof HTMLButtonElement || b instanceof HTMLInputElement ? b.form : null;
    buttons.push({
      selector: selector(b), text: label(b),
      attrs: [attr(b, 'id'), attr(b, 'class'), attr(b, 'name'), attr(b, 'data-action')].join(' '),
      form_method: form ? method(form) : '',
    });
  }
  // Which tab, item or panel is selected or open: part of a state even where the address is not.
  const selected = $all(document, '[aria-selected=true],[aria-current]:not([aria-current=false]),[aria-expanded=true],details[open]')
    .filter(visible).slice(0, 100).map(selector);
  const headings = $all(document, 'h1,h2').filter(visible)
    .map((h) => textOf(h).trim().slice(0, 200)).filter((t) => t).slice(0, 4);
  const images = $all(document, 'img').filter(visible);
  const main = $one(document, 'main') || body;
  // Where web software names its own release: a generator tag, a footer (its titles too).
  const generator = $all(document, 'meta[name=generator i]').slice(0, 5)
    .map((m) => attr(m, 'content')).join('\n').slice(0, 500);
  const footer = $all(document, 'footer,[role=contentinfo]').slice(0, 3)
    .map((f) => [textOf(f).slice(0, 1000), ...$all(f, '[title]').slice(0, 20).map((e) => attr(e, 'title').slice(0, 200))].join('\n'))
    .join('\n').slice(0, 3000);
  const snapshot = {
    url: getter(Document.prototype, 'URL').call(document),
    content_type: str(getter(Document.prototype, 'contentType').call(document)),
    title: str(getter(Document.prototype, 'title').call(document)).slice(0, 500),
    headings,
    selected,
    forms,
    links,
    buttons,
    structure: body ? structure(body, 0) : '',
    scroll_height: root ? Number(getter(Element.prototype, 'scrollHeight').call(root)) : 0,
    viewport_height: Number(window.innerHeight) || 0,
    element_count: $all(document, '*').length,
    images_without_alt: images.filter((i) => !$has(i, 'alt')).slice(0, 20).map(selector),
    unlabelled_fields: forms.flatMap((f) => f.fields).filter((f) => !f.label).map((f) => f.selector).slice(0, 20),
    text: main ? textOf(main).slice(0, 400) : '',
    version_hints: { generator, footer },
  };
  // A lone surrogate (invalid UTF-16) would make the JSON unreadable: replaced, as UTF-8 does.
  return JSON.stringify(snapshot, (_, v) => (typeof v === 'string' ? v.toWellFormed() : v));
})()

(() => {
const data = JSON.parse(document.getElementById('gv-steps').textContent);
const figure = document.getElementById('graph');
const svg = figure.querySelector('svg');
const natural = svg.viewBox.baseVal.width;
let step = data.steps - 1, timer = null, moved = false;
function show(k) {
  step = Math.max(0, Math.min(data.steps - 1, k));
  const t = (data.lead + step + 0.5) * data.seconds;
  svg.style.setProperty('--gv-seek', (-t) + 's');
  document.getElementById('step-count').textContent = 'step ' + (step + 1) + ' of ' + data.steps;
  document.getElementById('step-text').textContent = data.captions[step];
  document.getElementById('prev').disabled = step === 0;
  document.getElementById('next').disabled = step === data.steps - 1;
  const lit = Array.from(svg.querySelectorAll('g.node'))
    .find(g => (g.querySelector('title') || {}).textContent === data.lit[step]);
  if (lit && moved) lit.scrollIntoView({block: 'nearest', inline: 'nearest'});
  moved = true;
}
function zoom(how) {
  figure.classList.toggle('fit', how === 'fit');
  svg.style.width = how === 'fit' ? '' : (natural * Number(how)) + 'px';
  for (const b of document.querySelectorAll('[data-zoom]')) b.setAttribute('aria-pressed', String(b.dataset.zoom === how));
}
function stop() { if (timer) { clearInterval(timer); timer = null; document.getElementById('play').textContent = 'Play'; } }
document.getElementById('prev').addEventListener('click', () => { stop(); show(step - 1); });
document.getElementById('next').addEventListener('click', () => { stop(); show(step + 1); });
document.getElementById('play').addEventListener('click', () => {
  if (timer) { stop(); return; }
  if (step === data.steps - 1) show(0);
  document.getElementById('play').textContent = 'Pause';
  timer = setInterval(() => { if (step === data.steps - 1) stop(); else show(step + 1); }, 1000 * data.seconds);
});
for (const b of document.querySelectorAll('[data-zoom]')) b.addEventListener('click', () => zoom(b.dataset.zoom));
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') { stop(); show(step + 1); }
  if (e.key === 'ArrowLeft') { stop(); show(step - 1); }
});
zoom('fit');
show(data.start);
})();

// The preset buttons: one click loads a seed's scenario (../presets.js defines them). Called
// again on a language switch: labels and help are in the current language.

export function createPresetButtons(container, presets, onPick) {
  container.replaceChildren(...presets.map((p) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'preset';
    button.dataset.preset = p.id;
    const title = document.createElement('span');
    title.className = 'preset-title';
    title.textContent = p.label;
    const help = document.createElement('span');
    help.className = 'preset-help';
    help.textContent = p.help;
    button.append(title, help);
    button.addEventListener('click', () => onPick(p));
    return button;
  }));
}

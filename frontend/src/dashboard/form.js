// A settings form over one GET/PATCH endpoint, for the quality, loop and project settings (POST for a new project).
// The server judges every value (novalidate: the browser does not pre-empt it); a refused one
// gets the server's message beside its field (aria-invalid, aria-describedby), and nothing is
// stored until all of them are good.
import { call } from "./api.js";
import { errorText, fieldErrors, statusLine } from "./ratings.js";
import { el } from "../dom.js";

/**
 * Append to ``box`` a form of ``fields`` ({name, label, help} or {group}) filled from ``values``.
 *
 * ``control(field, values)`` makes a field's input, ``show(inputs, values)`` fills them,
 * ``read(name, input)`` gives a field's value for the PATCH; ``group(field, form)`` appends a
 * group's heading; ``saved(values)`` runs after a good save and gives the message to show.
 * ``ids``: ``{prefix, form, error, message, save}``, the element ids' prefix and the test ids.
 * ``method``: PATCH to change what exists, POST to create (the new-project form).
 */
export function settingsForm(box, { url, method = "PATCH", fields, values, ids, formClass, saveLabel, saveClass = "primary",
                                    control, show, read, group, saved }) {
  const form = el("form", formClass);
  form.noValidate = true;
  form.dataset.testid = ids.form;
  const inputs = {};
  const errors = {};
  for (const field of fields) {
    if (field.group) {
      group(field, form);
      continue;
    }
    const input = control(field, values);
    input.id = `${ids.prefix}${field.name}`;
    input.name = field.name;
    const help = el("span", "help", field.help);
    help.id = `${input.id}-help`;
    const error = el("span", "field-error");
    error.id = `${input.id}-error`;
    error.dataset.testid = `${ids.error}${field.name}`;
    input.setAttribute("aria-describedby", `${help.id} ${error.id}`);
    const label = el("label", null, field.label);
    label.htmlFor = input.id;
    const cell = el("div");
    cell.append(input, help, error);
    form.append(label, cell);
    inputs[field.name] = input;
    errors[field.name] = error;
  }
  show(inputs, values);
  const save = el("button", saveClass, saveLabel);
  save.type = "submit";
  if (ids.save) save.dataset.testid = ids.save;
  const message = statusLine(ids.message);
  const buttons = el("div");
  buttons.append(save, message);
  form.append(el("span"), buttons);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    message.classList.remove("errors");
    const body = {};
    for (const [name, input] of Object.entries(inputs)) {
      body[name] = read(name, input);
      errors[name].textContent = "";
      input.removeAttribute("aria-invalid");
    }
    save.disabled = true;
    try {
      const stored = await call(url, { method, body });
      show(inputs, stored);
      message.textContent = saved(stored);
    } catch (error) {
      const found = fieldErrors(error);
      let first = null;
      for (const [name, text] of Object.entries(found)) {
        if (!errors[name]) continue;
        errors[name].textContent = text;
        inputs[name].setAttribute("aria-invalid", "true");
        first ??= inputs[name];
      }
      message.textContent = first ? "Not saved: fix the marked fields." : `Not saved: ${errorText(error)}`;
      message.classList.add("errors");
      first?.focus();
    } finally {
      save.disabled = false;
    }
  });
  box.append(form);
  return save;
}

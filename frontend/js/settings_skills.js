// Settings → Skills: every skill in every root (search, view, on/off, open its folder), the person's own
// custom skills (create, edit, delete), the global folders of other agent tools (on/off, add, remove) and
// external packages (install from a git URL or a folder, update, on/off, remove).

import { del, get, post, put } from "./api.js";
import { el } from "./cards.js";
import { askConfirm, askText } from "./dialogs.js";
import { t, currentLanguage } from "./strings.js";
import { actionButton } from "./settings_common.js";

function field(label, name, multiline = false) {
  const wrap = el("label", "field");
  const input = el(multiline ? "textarea" : "input");
  input.name = name;
  if (multiline) input.rows = 6;
  wrap.append(el("span", "", label), input);
  return wrap;
}

function check(label, checked, onChange) {
  const wrap = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.checked = checked;
  box.addEventListener("change", () => onChange(box.checked));
  wrap.append(box, " ", label);
  return wrap;
}

function state(skill) {
  if (skill.skipped) return ["skipped", t("skillSkipped", { reason: skill.reason })];
  if (skill.quarantined) return ["quarantined", t("skillQuarantined", { reason: skill.reason })];
  if (skill.checking) return ["checking", t("skillChecking")];
  if (skill.shadowed) return ["shadowed", t("skillShadowed", { path: skill.shadowed_by })];
  if (!skill.enabled) return ["off", t("skillOff")];
  return ["ok", ""];
}

// The desktop window can open a folder in the file manager; a browser shows the path to copy.
async function openFolder(path, onInfo) {
  const bridge = window.pywebview?.api;
  if (bridge?.open_folder && (await bridge.open_folder(path))) return;
  onInfo(t("skillFolderIs", { path }));
}

export async function skillsSection(guard, refresh, onInfo) {
  const [data, { packages }] = await Promise.all([get("/api/skills"), get("/api/packages")]);
  const section = el("section", "skills");
  section.append(el("h3", "", t("skills")), el("p", "hint", t("skillsHint")));

  // ---- the skills, with a search over names and descriptions ----
  const search = el("input", "skill-search");
  search.type = "search";
  search.placeholder = t("skillSearch");
  search.setAttribute("aria-label", t("skillSearch"));
  const list = el("ul", "skill-list");
  const viewer = el("pre", "skill-text");
  viewer.hidden = true;
  const form = el("form", "skill-form");
  let editing = null;
  const language = currentLanguage();

  for (const skill of data.skills) {
    const [kind, why] = state(skill);
    const item = el("li", `skill ${kind}`);
    item.dataset.skill = skill.name;
    item.dataset.tier = skill.tier;
    const description = skill.descriptions?.[language] ?? skill.description ?? "";
    item.dataset.text = `${skill.name} ${description}`.toLowerCase();
    const head = el("div", "skill-head");
    head.append(el("strong", "", skill.name), el("span", `tag tier ${skill.tier}`, t(`tier_${skill.tier}`)));
    if (!skill.trusted) head.append(el("span", "tag open", t("skillOpenTier")));
    item.append(head, el("span", "hint", description));
    if (why) item.append(el("span", `state ${kind}`, why));
    const actions = el("div", "skill-actions");
    if (!skill.skipped) {
      actions.append(
        actionButton("small", t("skillView"), guard(async () => {
          const shown = await get(`/api/skills/show?path=${encodeURIComponent(skill.path)}`);
          viewer.textContent = shown.text;
          viewer.hidden = false;
          viewer.scrollIntoView({ block: "nearest" });
        })),
        check(t("skillOn"), skill.enabled, guard(async (on) => {
          await post("/api/skills/enabled", { path: skill.path, enabled: on });
          refresh();
        })),
      );
    }
    actions.append(actionButton("small", t("skillOpenFolder"), guard(() => openFolder(skill.path, onInfo))));
    if (skill.tier === "custom" && !skill.skipped) {
      actions.append(
        actionButton("small", t("skillEdit"), guard(async () => {
          const shown = await get(`/api/skills/show?path=${encodeURIComponent(skill.path)}`);
          editing = skill.name;
          form.elements.name.value = skill.name;
          form.elements.name.readOnly = true;
          form.elements.description.value = skill.description;
          form.elements.body.value = shown.text.split(/\n---\s*\n/).slice(1).join("\n---\n").trim();
          form.querySelector("button[type=submit]").textContent = t("skillSave");
          form.elements.description.focus();
        })),
        actionButton("small danger", t("remove"), guard(async () => {
          if (!(await askConfirm({ title: t("skillDeleteTitle"), message: t("skillDeleteText", { name: skill.name }), action: t("remove") }))) return;
          await del(`/api/skills/custom/${encodeURIComponent(skill.name)}`);
          refresh();
        })),
      );
    }
    item.append(actions);
    list.append(item);
  }
  if (!data.skills.length) list.append(el("li", "hint", t("noSkills")));
  search.addEventListener("input", () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const item of list.querySelectorAll("li.skill")) {
      item.hidden = !words.every((w) => item.dataset.text.includes(w));
    }
  });

  // ---- a custom skill: create or edit ----
  const submit = el("button", "", t("skillCreate"));
  submit.type = "submit";
  form.append(
    el("h4", "", t("skillCustom")),
    field(t("skillName"), "name"),
    field(t("skillDescription"), "description"),
    field(t("skillBody"), "body", true),
    submit,
  );
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const body = {
      name: form.elements.name.value.trim(),
      description: form.elements.description.value.trim(),
      body: form.elements.body.value,
    };
    if (editing) await put(`/api/skills/custom/${encodeURIComponent(editing)}`, body);
    else await post("/api/skills", body);
    refresh();
  }));

  // ---- the global folders of other agent tools ----
  const folders = el("div", "skill-folders");
  folders.append(
    el("h4", "", t("skillFolders")),
    check(t("skillGlobal"), data.global_enabled, guard(async (on) => {
      await post("/api/skills/global", { enabled: on });
      refresh();
    })),
  );
  const rootList = el("ul", "skill-roots");
  for (const root of data.roots.filter((r) => r.tier === "global")) {
    const item = el("li", "skill-root");
    item.dataset.folder = root.origin;
    item.append(check(root.origin, root.enabled, guard(async (on) => {
      await post("/api/skills/folders", { folder: root.origin, action: on ? "on" : "off" });
      refresh();
    })));
    if (!root.exists) item.append(el("span", "hint", ` ${t("skillFolderMissing")}`));
    if (root.added) {
      item.append(actionButton("small danger", t("remove"), guard(async () => {
        await post("/api/skills/folders", { folder: root.origin, action: "remove" });
        refresh();
      })));
    }
    rootList.append(item);
  }
  folders.append(rootList, actionButton("small", t("skillAddFolder"), guard(async () => {
    const picked = (await window.pywebview?.api?.pick_folder?.()) ?? (await askText({ title: t("skillAddFolder"), label: t("skillFolderPath") }));
    if (!picked) return;
    await post("/api/skills/folders", { folder: picked, action: "add" });
    refresh();
  })));

  // ---- external packages ----
  const hosted = el("div", "packages");
  hosted.append(el("h4", "", t("packages")), el("p", "hint", t("packagesHint")));
  const packageList = el("ul", "package-list");
  for (const item of packages) {
    const row = el("li", "package");
    row.dataset.package = item.name;
    const commands = item.entries.map((e) => e.name).join(", ");
    row.append(
      el("strong", "", item.name),
      el("span", "hint", ` ${t("packageKind", { skills: item.skill_roots.length, commands: commands || "—" })} · ${item.source}`),
      check(t("skillOn"), item.enabled, guard(async (on) => {
        await post(`/api/packages/${encodeURIComponent(item.name)}/enabled`, { enabled: on });
        refresh();
      })),
      actionButton("small", t("packageUpdate"), guard(async () => {
        await post(`/api/packages/${encodeURIComponent(item.name)}/update`, {});
        onInfo(t("packageUpdated", { name: item.name }));
        refresh();
      })),
      actionButton("small danger", t("remove"), guard(async () => {
        if (!(await askConfirm({ title: t("packageRemoveTitle"), message: t("packageRemoveText", { name: item.name }), action: t("remove") }))) return;
        await del(`/api/packages/${encodeURIComponent(item.name)}`);
        refresh();
      })),
    );
    packageList.append(row);
  }
  if (!packages.length) packageList.append(el("li", "hint", t("noPackages")));
  const install = el("form", "package-form");
  const deps = el("label", "check");
  const depsBox = el("input");
  depsBox.type = "checkbox";
  depsBox.name = "dependencies";
  deps.append(depsBox, " ", t("packageDeps"));
  const installButton = el("button", "", t("packageInstall"));
  installButton.type = "submit";
  install.append(field(t("packageSource"), "source"), field(t("packageName"), "name"), deps, installButton);
  install.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    installButton.disabled = true;
    try {
      await post("/api/packages", {
        source: install.elements.source.value.trim(),
        name: install.elements.name.value.trim() || null,
        dependencies: install.elements.dependencies.checked,
      });
    } finally {
      installButton.disabled = false;
    }
    refresh();
  }));
  hosted.append(packageList, install);

  section.append(search, list, viewer, form, folders, hosted);
  watch(section, data.version, search, guard, refresh, onInfo);
  return section;
}

// Skills change under us (a folder of another tool, a package): while this section is shown, a newer
// version of the list replaces it in place, keeping what the person typed in the search. Never while they
// are filling a form or one of its requests is on its way: the newer list is fetched first, and the person
// may have started typing meanwhile (a URL typed into the old form, "Install" pressed on the new one).
const WATCH_MS = 1000;
function watch(section, version, search, guard, refresh, onInfo) {
  const busy = () => !section.isConnected
    || (section.contains(document.activeElement) && section.querySelector("form :focus"))
    || section.querySelector("form button:disabled")
    || [...section.querySelectorAll("form input:not([type=checkbox]), form textarea")].some((f) => f.value);
  let checking = false;
  const timer = setInterval(async () => {
    if (!section.isConnected) { clearInterval(timer); return; }
    if (checking || busy()) return;
    checking = true;
    try {
      const latest = await get("/api/skills/version");
      if (latest.version === version) return;
      const fresh = await skillsSection(guard, refresh, onInfo);
      if (busy()) return; // the fresh section is dropped; its own watch ends with it
      clearInterval(timer);
      const box = fresh.querySelector(".skill-search");
      box.value = search.value;
      box.dispatchEvent(new Event("input"));
      section.replaceWith(fresh);
    } catch { /* the next tick tries again */ } finally { checking = false; }
  }, WATCH_MS);
}

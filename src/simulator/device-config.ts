import { isDeepStrictEqual } from 'node:util';
import type { FileKind } from './file-kind.js';
import { interfaceKind, type DeviceModel } from './device-model.js';
import { withInterfaceLevelFieldsOf } from './interface-level-copy.js';
import { parseStanzaBody } from './stanza-schema.js';
import { checkStanza, checkVlansOnParent, type RuleContext } from './stanza-rules.js';
import { FAMILIES, FILE_SLOTS, stanzaKey, type Family, type FileSlot, type Stanza } from './stanza.js';

/**
 * The configuration a device keeps: active and pending stanzas per (interface, family), the
 * uploaded files per slot (pending content until the next restart), and the ACL. The HTTP layer
 * turns its outcomes into responses; the restart logic calls applyPending.
 */

export type Outcome = { ok: true } | { ok: false; status: 400 | 404 | 409; error: string };

export interface StoredFile {
  content: Buffer;
  kind: FileKind;
}

export type ConfigState = 'active' | 'pending';

const fail = (status: 400 | 404 | 409, error: string): Outcome => ({ ok: false, status, error });

export class DeviceConfig {
  readonly model: DeviceModel;
  private readonly active = new Map<string, Stanza>();
  /** Changes since the last networking restart; null marks a stanza for removal. */
  private readonly pending = new Map<string, Stanza | null>();
  /**
   * The interface of each stanza key ever stored: a key is an opaque identity (its spelling
   * belongs to admin-api's stanzaKey), so names are remembered, never parsed out of keys.
   */
  private readonly interfaceOfKey = new Map<string, string>();
  private readonly activeFiles = new Map<FileSlot, Map<string, StoredFile>>();
  private readonly pendingFiles = new Map<FileSlot, Map<string, StoredFile>>();

  constructor(model: DeviceModel) {
    this.model = model;
  }

  /** Installs a starting stanza as active, checked with the same rules as POST /interface/. */
  seedActive(body: unknown): Outcome {
    const outcome = this.post(body);
    if (outcome.ok) this.applyPending();
    return outcome;
  }

  seedFile(slot: FileSlot, name: string, file: StoredFile): void {
    this.storeFile(slot, name, file);
    this.applyPendingFiles();
  }

  /**
   * POST /interface/: the stanza becomes pending, and its interface-level fields are copied into
   * the other family's pending stanza. The rules are judged on the pending view the POST would
   * leave, so that a VLAN with 802.1X is never left on a parent without it.
   */
  post(body: unknown): Outcome {
    const parsed = parseStanzaBody(body);
    if (!parsed.ok) return fail(400, parsed.error);
    const stanza = parsed.value;
    const error = checkStanza(stanza, this.ruleContext());
    if (error !== undefined) return fail(400, error);
    const changes = new Map<string, Stanza>([[stanzaKey(stanza.name, stanza.family), stanza]]);
    const sibling = this.siblingCopy(stanza);
    if (sibling !== undefined) {
      changes.set(stanzaKey(sibling.name, sibling.family), sibling);
      // Cannot fail while the rules on interface-level fields ignore the family; kept as a guard.
      const siblingError = checkStanza(sibling, this.ruleContext(changes));
      if (siblingError !== undefined)
        return fail(
          400,
          `${siblingError} (in the ${sibling.family} stanza, which takes the interface-level fields of this one)`,
        );
    }
    const vlanError = checkVlansOnParent(stanza.name, 'POST', this.ruleContext(changes));
    if (vlanError !== undefined) return fail(400, vlanError);
    for (const [key, changed] of changes) {
      this.interfaceOfKey.set(key, changed.name);
      this.pending.set(key, changed);
    }
    return { ok: true };
  }

  /** The other family's pending stanza with the posted interface-level fields, if that changes it. */
  private siblingCopy(posted: Stanza): Stanza | undefined {
    const family = FAMILIES.find((f) => f !== posted.family);
    if (family === undefined) return undefined;
    const sibling = this.pendingView(posted.name, family);
    // A stanza marked for removal stays removed; a missing one is not created.
    if (sibling == null) return undefined;
    const copy = withInterfaceLevelFieldsOf(posted, sibling);
    return isDeepStrictEqual(copy, sibling) ? undefined : copy;
  }

  /** PUT /interface/{name}/: update fields of an existing wireless stanza; null removes a field. */
  put(name: string, body: unknown): Outcome {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return fail(400, 'Request body must be a JSON object.');
    const fields = body as Record<string, unknown>;
    const kind = interfaceKind(this.model, name);
    if (kind === undefined) return fail(404, `No interface "${name}" on this device.`);
    if (kind.kind !== 'wireless') {
      return fail(
        400,
        `PUT /interface/${name}/ updates wireless interfaces only; post the whole stanza with POST /interface/.`,
      );
    }
    const family = fields['family'];
    if (family !== 'inet' && family !== 'inet6') {
      return fail(
        400,
        fields['family'] === undefined ? 'Field "family" is required.' : 'Field "family" must be "inet" or "inet6".',
      );
    }
    if (fields['name'] !== undefined && fields['name'] !== name) {
      return fail(400, `Field "name" must be "${name}", the interface in the path.`);
    }
    const existing = this.pendingView(name, family);
    if (existing == null) return fail(404, `Interface "${name}" has no ${family} stanza to update.`);
    if (fields['ssid'] !== undefined && fields['ssid'] !== existing.ssid) {
      return fail(
        409,
        'Field "ssid" cannot be changed in place: delete the interface, restart networking, add it with the new SSID and restart networking again.',
      );
    }
    const merged: Record<string, unknown> = { ...existing };
    for (const [field, value] of Object.entries(fields)) {
      if (value === null) delete merged[field];
      else merged[field] = value;
    }
    return this.post(merged);
  }

  /** DELETE /interface/{name}/?family=: marks the stanza for removal at the next restart. */
  remove(name: string, family: string | null): Outcome {
    if (family !== 'inet' && family !== 'inet6') {
      return fail(400, 'Query parameter "family" must be "inet" or "inet6".');
    }
    if (interfaceKind(this.model, name) === undefined) return fail(404, `No interface "${name}" on this device.`);
    if (this.pendingView(name, family) == null) return fail(404, `Interface "${name}" has no ${family} stanza.`);
    const key = stanzaKey(name, family);
    const vlanError = checkVlansOnParent(name, 'DELETE', this.ruleContext(new Map([[key, null]])));
    if (vlanError !== undefined) return fail(400, vlanError);
    // A stanza that was never active simply stops being pending.
    if (this.active.has(key)) this.pending.set(key, null);
    else this.pending.delete(key);
    return { ok: true };
  }

  /** Networking restart: pending becomes active. Returns the keys whose stanza changed. */
  applyPending(): string[] {
    const changed: string[] = [];
    for (const [key, stanza] of this.pending) {
      if (stanza === null) this.active.delete(key);
      else this.active.set(key, stanza);
      changed.push(key);
    }
    this.pending.clear();
    this.applyPendingFiles();
    return changed;
  }

  /** For the "wrong active config" fault: removes one field from an active stanza. */
  dropActiveField(key: string, field: string): boolean {
    const stanza = this.active.get(key);
    if (stanza === undefined || !(field in stanza)) return false;
    const copy: Record<string, unknown> = { ...stanza };
    delete copy[field];
    this.active.set(key, copy as unknown as Stanza);
    return true;
  }

  activeStanza(name: string, family: Family): Stanza | undefined {
    return this.active.get(stanzaKey(name, family));
  }

  pendingView(name: string, family: Family): Stanza | null | undefined {
    const key = stanzaKey(name, family);
    return this.pending.has(key) ? this.pending.get(key) : this.active.get(key);
  }

  /** The stanzas of an interface in one state; in the pending view null marks a removal. */
  stanzasOf(name: string, state: ConfigState): Partial<Record<Family, Stanza | null>> {
    const out: Partial<Record<Family, Stanza | null>> = {};
    for (const family of FAMILIES) {
      const stanza = state === 'active' ? this.activeStanza(name, family) : this.pendingView(name, family);
      if (stanza !== undefined) out[family] = stanza;
    }
    return out;
  }

  /** Interfaces with a stanza in that state: physical ones in the device's order, then the rest. */
  interfaceNames(state: ConfigState): string[] {
    const keys =
      state === 'active' ? [...this.active.keys()] : [...new Set([...this.active.keys(), ...this.pending.keys()])];
    const names = new Set(keys.map((key) => this.interfaceOfKey.get(key) ?? key));
    const physical = Object.keys(this.model.interfaces);
    const rank = (n: string) => (physical.includes(n) ? physical.indexOf(n) : physical.length);
    return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  }

  storeFile(slot: FileSlot, name: string, file: StoredFile): void {
    let bySlot = this.pendingFiles.get(slot);
    if (bySlot === undefined) this.pendingFiles.set(slot, (bySlot = new Map<string, StoredFile>()));
    bySlot.set(name, file);
  }

  /** The file as the next restart will see it (latest upload). */
  loadedFile(slot: FileSlot, name: string): StoredFile | undefined {
    return this.pendingFiles.get(slot)?.get(name) ?? this.activeFiles.get(slot)?.get(name);
  }

  /** The file content networking uses now (as of the last restart). */
  activeFile(slot: FileSlot, name: string): StoredFile | undefined {
    return this.activeFiles.get(slot)?.get(name);
  }

  /** Every file, for the control port's state: names, kinds and which content is where. */
  fileListing(): { slot: FileSlot; name: string; state: ConfigState; kind: FileKind; content: Buffer }[] {
    const out: { slot: FileSlot; name: string; state: ConfigState; kind: FileKind; content: Buffer }[] = [];
    for (const slot of FILE_SLOTS) {
      for (const [state, store] of [
        ['active', this.activeFiles],
        ['pending', this.pendingFiles],
      ] as const) {
        for (const [name, file] of store.get(slot) ?? [])
          out.push({ slot, name, state, kind: file.kind, content: file.content });
      }
    }
    return out;
  }

  /** The rules' view of the device; `proposed` overlays the pending changes a request would make. */
  ruleContext(proposed: ReadonlyMap<string, Stanza | null> = new Map()): RuleContext {
    return {
      model: this.model,
      pendingView: (name, family) => {
        const key = stanzaKey(name, family);
        return proposed.has(key) ? proposed.get(key) : this.pendingView(name, family);
      },
      pendingInterfaces: () => this.interfaceNames('pending'),
      loadedFileKind: (slot, name) => this.loadedFile(slot, name)?.kind,
    };
  }

  private applyPendingFiles(): void {
    for (const [slot, files] of this.pendingFiles) {
      let bySlot = this.activeFiles.get(slot);
      if (bySlot === undefined) this.activeFiles.set(slot, (bySlot = new Map<string, StoredFile>()));
      for (const [name, file] of files) bySlot.set(name, file);
    }
    this.pendingFiles.clear();
  }
}

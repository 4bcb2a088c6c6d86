#!/usr/bin/env python3
"""Checks that the initramfs of a staged image root holds every driver the boot path needs.

The image builds its initramfs with MODULES=list: only the modules named in
image/initramfs/spindle-modules (and their modules.dep dependencies) are in it. A driver that
is a module but not named there is not a build error; the board just never finds its root
device ("Gave up waiting for root device"), and only on real hardware. A typical case: the
Pi 4 and Pi 5 SD controllers wait for their regulators, which are modules (fixed,
gpio_regulator) that no module dependency brings along.

So the list is checked against what the boards' device trees say instead of guessed. For every
board (its DTB as on the boot partition, else the kernel package's), the nodes on the root
path are taken: the SD card controller (an SDIO controller with a function node, the Pi 5's
WiFi, is not the card slot) and the USB storage path (the PCIe controller and the USB host
controller behind it; a PCI device the tree leaves out, the Pi 4's VL805, is taken below the
PCIe controller). From each, the walk follows the suppliers the kernel waits for (phandle
properties: *-supply, gpios, clocks, resets, pinctrl-N, interrupt-parent, interrupts-extended,
power-domains, phys, msi-parent, msi-map, mboxes; a target without compatible stands for its
nearest ancestor with one) and the parent bus nodes, transitively, skipping disabled nodes.
Each node's compatibles are mapped to drivers through the kernel's own tables: modules.alias
(modules), modules.builtin.modinfo (built in), and, where no module claims the node, the
compatible string in the kernel image (built-in drivers of kernels whose
modules.builtin.modinfo has no device aliases, such as 6.1). Nodes with a compatible given as
a PCI id ("pci1106,3483") are matched through the pci: aliases. A node is satisfied if a
compatible has a built-in driver or a module that is in the initrd together with its
modules.dep dependencies. The fixed needs (mmc_block, usb_storage, uas, sd_mod, ext4) are
checked the same way. Missing soft dependencies (modules.softdep) are only noted.

Every supplier a node names counts as needed (the check does not know which ones a driver
treats as optional), so a failure is a strong hint, to be confirmed in the driver if in doubt.

Usage: check-boot-drivers.py [--boards pi4,pi5-c0,pi5-d0] [--drop MODULE]... [--quiet] ROOT
Exit status: 0 all present, 1 a driver module is missing from the initrd, 2 the tree could not
be checked (no kernel, DTB, initrd, ...). Standard library only; decompressing a zstd or lz4
initrd calls the host's zstd or lz4.
"""

import argparse
import collections
import fnmatch
import gzip
import lzma
import os
import re
import struct
import subprocess
import sys

PROG = "check-boot-drivers"
MODULE_LIST = "image/initramfs/spindle-modules"

# key, board name, DTBs (first required, the others checked when the kernel ships them),
# root-path nodes: (compatible, what it is for), and the nodes spindle itself needs on the board
# after boot: (compatible, at least how many enabled, what for). A "pciVVVV,DDDD" compatible is
# a PCI device: looked up in the tree below the previous root-path node, taken as a virtual node
# when the tree does not describe it. PCI class codes (for class-matched drivers such as xhci_pci).
PI5_NEEDS = [("raspberrypi,rp1-gpio", 1, "the 40-pin header's GPIO: LEDs and button"),
             ("snps,dwc3", 2, "the RP1's two USB3 controllers")]
BOARDS = [
    ("pi4", "Raspberry Pi 4",
     ["bcm2711-rpi-4-b.dtb", "bcm2711-rpi-400.dtb", "bcm2711-rpi-cm4-io.dtb"],
     [("brcm,bcm2711-emmc2", "SD card"), ("brcm,bcm2711-pcie", "USB"),
      ("pci1106,3483", "USB")],
     [("brcm,bcm2711-gpio", 1, "the 40-pin header's GPIO: LEDs and button")]),
    ("pi5-c0", "Raspberry Pi 5 (C0)", ["bcm2712-rpi-5-b.dtb"],
     [("brcm,bcm2712-sdhci", "SD card"), ("pci1de4,1", "USB"), ("snps,dwc3", "USB")], PI5_NEEDS),
    ("pi5-d0", "Raspberry Pi 5 (D0)", ["bcm2712-d-rpi-5-b.dtb"],
     [("brcm,bcm2712-sdhci", "SD card"), ("pci1de4,1", "USB"), ("snps,dwc3", "USB")], PI5_NEEDS),
]
PCI_CLASS = {(0x1106, 0x3483): "0c0330",  # VIA VL805 xHCI (USB 3 controller)
             (0x1DE4, 0x0001): "020000"}  # Raspberry Pi RP1 (announces itself as Ethernet)
FIXED_NEEDS = [("mmc_block", "SD card"), ("usb_storage", "USB"), ("uas", "USB"),
               ("sd_mod", "USB"), ("ext4", "root filesystem")]

# Supplier properties: name (or regular expression) -> the provider's #cells property
# (None: a plain phandle list; "" a single phandle; an int: fixed entry size, phandle at 1).
SUPPLIER_PROPS = [
    (re.compile(r".+-supply$"), ""),
    (re.compile(r"^interrupt-parent$"), ""),
    (re.compile(r"^(.+-)?gpios?$"), "#gpio-cells"),
    (re.compile(r"^clocks$"), "#clock-cells"),
    (re.compile(r"^resets$"), "#reset-cells"),
    (re.compile(r"^pinctrl-[0-9]+$"), None),
    (re.compile(r"^interrupts-extended$"), "#interrupt-cells"),
    (re.compile(r"^power-domains$"), "#power-domain-cells"),
    (re.compile(r"^phys$"), "#phy-cells"),
    (re.compile(r"^msi-parent$"), "#msi-cells"),
    (re.compile(r"^msi-map$"), 4),
    (re.compile(r"^mboxes$"), "#mbox-cells"),
]


class CheckError(Exception):
    """The tree cannot be checked at all (exit status 2)."""


def norm(module):
    """Module name as modprobe compares it."""
    return module.replace("-", "_")


def module_name(path):
    """kernel/drivers/regulator/gpio-regulator.ko.xz -> gpio_regulator"""
    base = os.path.basename(path)
    return norm(base[:base.index(".ko")]) if ".ko" in base else None


def in_root(root, path):
    """The host path of PATH inside ROOT, following symlinks (absolute ones stay in ROOT)."""
    parts = [p for p in path.split("/") if p]
    cur, hops = [], 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            cur = cur[:-1]
            continue
        full = os.path.join(root, *cur, part)
        if os.path.islink(full):
            hops += 1
            if hops > 40:
                raise CheckError(f"symlink loop at {full}")
            link = os.readlink(full)
            if link.startswith("/"):
                cur = []
            parts = [p for p in link.split("/") if p] + parts
            continue
        cur.append(part)
    return os.path.join(root, *cur)


# ---------------------------------------------------------------- flattened device tree

class Node:
    """One device tree node: name, path, properties (raw bytes), parent, children."""

    def __init__(self, name, parent):
        self.name, self.parent, self.props, self.children = name, parent, {}, []
        if parent is None:
            self.path = "/"
        else:
            self.path = (parent.path.rstrip("/") + "/" + name)

    def string_list(self, prop):
        raw = self.props.get(prop)
        if raw is None:
            return []
        return [s.decode("ascii", "replace") for s in raw.split(b"\0") if s]

    def cells(self, prop):
        raw = self.props.get(prop, b"")
        return list(struct.unpack(f">{len(raw) // 4}I", raw[:len(raw) // 4 * 4]))

    def cell(self, prop, default=None):
        values = self.cells(prop)
        return values[0] if values else default

    @property
    def compatibles(self):
        return self.string_list("compatible")

    @property
    def okay(self):
        status = self.string_list("status")
        return not status or status[0] in ("okay", "ok")

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def parse_fdt(data, what):
    """Parses a DTB (flattened device tree blob): returns (root node, {phandle: node})."""
    if len(data) < 40 or struct.unpack(">I", data[:4])[0] != 0xD00DFEED:
        raise CheckError(f"{what}: not a device tree blob (bad magic)")
    off_struct, off_strings = struct.unpack(">II", data[8:16])
    pos, root, node, phandles = off_struct, None, None, {}
    while True:
        token = struct.unpack(">I", data[pos:pos + 4])[0]
        pos += 4
        if token == 1:  # FDT_BEGIN_NODE
            end = data.index(b"\0", pos)
            node = Node(data[pos:end].decode("ascii", "replace"), node)
            if node.parent is None:
                root = node
            else:
                node.parent.children.append(node)
            pos = (end + 4) & ~3
        elif token == 2:  # FDT_END_NODE
            node = node.parent
        elif token == 3:  # FDT_PROP
            size, nameoff = struct.unpack(">II", data[pos:pos + 8])
            name_end = data.index(b"\0", off_strings + nameoff)
            name = data[off_strings + nameoff:name_end].decode("ascii", "replace")
            node.props[name] = data[pos + 8:pos + 8 + size]
            if name in ("phandle", "linux,phandle") and size == 4:
                phandles[struct.unpack(">I", node.props[name])[0]] = node
            pos = (pos + 8 + size + 3) & ~3
        elif token == 4:  # FDT_NOP
            continue
        elif token == 9:  # FDT_END
            return root, phandles
        else:
            raise CheckError(f"{what}: bad structure token {token} at offset {pos - 4}")


def phandle_targets(node, prop, cells_prop, phandles):
    """The provider nodes a supplier property of NODE points at."""
    values = node.cells(prop)
    if cells_prop == "":
        values = values[:1]
    targets, i = [], 0
    while i < len(values):
        if isinstance(cells_prop, int):  # msi-map: (rid-base, phandle, msi-base, length)
            target = phandles.get(values[i + 1]) if i + 1 < len(values) else None
            step = cells_prop
        else:
            target = phandles.get(values[i])
            if values[i] == 0 or target is None:  # an empty entry (or a dangling phandle)
                step = 1
            elif cells_prop:
                default = 0 if cells_prop == "#msi-cells" else None
                count = target.cell(cells_prop, default)
                if count is None:  # provider without #cells: the rest cannot be parsed
                    targets.append(target)
                    break
                step = 1 + count
            else:
                step = 1
        if target is not None:
            targets.append(target)
        i += step
    return targets


# ---------------------------------------------------------------- the kernel's tables

class AliasIndex:
    """Device aliases of modules.alias or modules.builtin.modinfo: OF compatibles indexed by
    the literal compatible of "of:N*T*C<compatible>[C*]", every other pattern kept for fnmatch."""

    OF_PREFIX = "of:N*T*C"

    def __init__(self):
        self.of_literal = collections.defaultdict(set)
        self.patterns = []  # (pattern, module)
        self.plain = collections.defaultdict(set)  # literal aliases ("crypto-crc32c")

    def add(self, pattern, module):
        module = norm(module)
        if pattern.startswith(self.OF_PREFIX):
            compat = pattern[len(self.OF_PREFIX):]
            if compat.endswith("C*"):
                compat = compat[:-2]
            if compat and not any(ch in compat for ch in "*?["):
                self.of_literal[compat].add(module)
                return
        if pattern.startswith(("of:", "pci:")):
            self.patterns.append((pattern, module))
        elif not any(ch in pattern for ch in "*?["):
            self.plain[pattern].add(module)

    def of_modules(self, node, compat):
        """Modules whose OF alias matches COMPAT on NODE."""
        found = set(self.of_literal.get(compat, ()))
        name = node.name.split("@")[0]
        dtype = (node.string_list("device_type") or ["<NULL>"])[0]
        tests = [f"of:N{name}T{dtype}C{compat}", f"of:N{name}T{dtype}C{compat}C"]
        for pattern, module in self.patterns:
            if pattern.startswith("of:") and any(fnmatch.fnmatchcase(t, pattern) for t in tests):
                found.add(module)
        return found

    def pci_modules(self, modalias):
        return {m for p, m in self.patterns if p.startswith("pci:") and fnmatch.fnmatchcase(modalias, p)}

    def __len__(self):
        return sum(len(v) for v in self.of_literal.values()) + len(self.patterns)


class Kernel:
    """The one kernel of the tree: ABI, module tables, DTB directory, initrd, image."""

    def __init__(self, root):
        self.root = root
        moddirs = in_root(root, "/usr/lib/modules")
        abis = sorted(d for d in (os.listdir(moddirs) if os.path.isdir(moddirs) else [])
                      if os.path.isfile(os.path.join(moddirs, d, "modules.dep")))
        if len(abis) != 1:
            raise CheckError(f"expected one kernel under {moddirs} (a directory with modules.dep), "
                             f"found {abis or 'none'}")
        self.abi = abis[0]
        self.moddir = os.path.join(moddirs, self.abi)
        self.aliases = AliasIndex()
        for line in self.read("modules.alias").splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[0] == "alias":
                self.aliases.add(fields[1], fields[2])
        self.builtin = {module_name(line) for line in self.read("modules.builtin").split()}
        self.builtin_aliases = AliasIndex()
        for entry in self.read("modules.builtin.modinfo").split("\0"):
            module, _, rest = entry.partition(".alias=")
            if rest:
                self.builtin_aliases.add(rest, module)
        self.deps, self.paths = {}, {}
        for line in self.read("modules.dep").splitlines():
            target, _, deps = line.partition(":")
            name = module_name(target)
            self.paths[name] = target
            self.deps[name] = [module_name(d) for d in deps.split()]
        self.softdeps = collections.defaultdict(list)  # module -> soft dependencies (names)
        for line in self.read("modules.softdep").splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[0] == "softdep":
                self.softdeps[norm(fields[1])] += [f for f in fields[2:] if not f.endswith(":")]
        self.image = self.load_image()

    def read(self, name):
        path = os.path.join(self.moddir, name)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError as e:
            raise CheckError(f"cannot read {path}: {e.strerror}") from e

    def load_image(self):
        """The kernel image's bytes (for compatible strings of built-in drivers), or None."""
        for path in (f"/usr/lib/modules/{self.abi}/vmlinuz", f"/boot/vmlinuz-{self.abi}"):
            host = in_root(self.root, path)
            if os.path.isfile(host):
                with open(host, "rb") as f:
                    data = f.read()
                if data[4:8] == b"zimg":  # EFI zboot: compressed payload at (offset, size)
                    start, size = struct.unpack("<II", data[8:16])
                    data = decompress(data[start:start + size], host)
                elif data[:2] == b"\x1f\x8b":
                    data = gzip.decompress(data)
                return data
        return None

    def in_image(self, compat):
        return self.image is not None and (b"\0" + compat.encode() + b"\0") in self.image

    def resolve_name(self, name):
        """Modules a modprobe name means: the module itself, or the modules of an alias."""
        return {norm(name)} if norm(name) in self.paths else self.aliases.plain.get(name, set())

    def soft_missing(self, modules, present):
        """Soft dependencies (modules.softdep) of MODULES and their dependencies that are
        neither built in nor present: [(module, soft dependency, its modules)]."""
        notes = []
        closure = set(modules).union(*(self.deps.get(m, []) for m in modules))
        for module in sorted(closure & present):
            for name in self.softdeps.get(module, []):
                mods = self.resolve_name(name)
                if mods and not mods & (present | self.builtin):
                    notes.append((module, name, sorted(mods)))
        return notes


def decompress(data, what):
    """Decompresses one compressed stream, by its magic number."""
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:6] == b"\xfd7zXZ\0":
        return lzma.decompress(data, format=lzma.FORMAT_XZ)
    if data[:3] == b"\x5d\0\0":
        return lzma.decompress(data, format=lzma.FORMAT_ALONE)
    tools = {b"\x28\xb5\x2f\xfd": ("zstd", ["zstd", "-dcq"]),
             b"\x02\x21\x4c\x18": ("lz4", ["lz4", "-dcq"]),
             b"\x04\x22\x4d\x18": ("lz4", ["lz4", "-dcq"]),
             b"BZh": ("bzip2", ["bzip2", "-dcq"])}
    for magic, (package, argv) in tools.items():
        if data.startswith(magic):
            try:
                run = subprocess.run(argv, input=data, capture_output=True, check=False)
            except FileNotFoundError as e:
                raise CheckError(f"{what}: {argv[0]} missing (apt-get install {package})") from e
            if run.returncode != 0 and not run.stdout:
                error = run.stderr.decode(errors="replace").strip()
                raise CheckError(f"{what}: {' '.join(argv)} failed: {error}")
            return run.stdout
    raise CheckError(f"{what}: unknown data at a stream start (magic {data[:6].hex()})")


def cpio_names(data, what):
    """Every file name in a (possibly concatenated, possibly compressed) newc cpio stream."""
    names, pos = [], 0
    while pos < len(data):
        if data[pos] == 0:  # padding between archives
            pos += 1
            continue
        if data[pos:pos + 6] not in (b"070701", b"070702"):  # the compressed rest
            names += cpio_names(decompress(data[pos:], what), what)
            break
        filesize = int(data[pos + 54:pos + 62], 16)
        namesize = int(data[pos + 94:pos + 102], 16)
        name = data[pos + 110:pos + 110 + namesize - 1].decode("utf-8", "replace")
        pos += (110 + namesize + 3) & ~3
        pos += (filesize + 3) & ~3
        if name != "TRAILER!!!":
            names.append(name)
    return names


def initrd_modules(kernel):
    """The modules in the tree's initrd for the kernel's ABI: {name: path in the initrd}."""
    path = in_root(kernel.root, f"/boot/initrd.img-{kernel.abi}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CheckError(f"cannot read the initrd {path}: {e.strerror}") from e
    marker = f"lib/modules/{kernel.abi}/"
    found = {}
    for name in cpio_names(data, path):
        if marker in name and ".ko" in os.path.basename(name):
            found[module_name(name)] = name
    if not found:
        raise CheckError(f"{path}: no modules for {kernel.abi} in it")
    return found


def find_dtb(kernel, name):
    """Host path of a board DTB: the one on the boot partition (what the firmware loads),
    else the kernel package's; (None, note) when the kernel ships no such DTB."""
    package = in_root(kernel.root, f"/usr/lib/linux-image-{kernel.abi}/broadcom/{name}")
    boot = in_root(kernel.root, f"/boot/firmware/{name}")
    note = ""
    if os.path.isfile(boot) and os.path.isfile(package):
        with open(boot, "rb") as a, open(package, "rb") as b:
            if a.read() != b.read():
                note = f"note: /boot/firmware/{name} differs from the kernel package's; checked the former"
    for path in (boot, package):
        if os.path.isfile(path):
            return path, note
    return None, f"no {name} in /boot/firmware or /usr/lib/linux-image-{kernel.abi}/broadcom"


# ---------------------------------------------------------------- the walk over a board's tree

class Visit:
    """A node on the root path: how it was reached (property, from which visit) and for what."""

    def __init__(self, node, via, purpose):
        self.node, self.via, self.purposes = node, via, [purpose]

    def chain(self):
        """How the walk got here from a root-path node, for messages."""
        parts, visit = [], self
        while visit.via is not None:
            prop, visit = visit.via
            parts.append(f"{prop} of {visit.node.path}")
        if not parts:
            return f"a root-path node ({self.purposes[0]})"
        return "reached as " + ", ".join(parts) + f" ({visit.purposes[0]} root path)"


def with_compatible(node):
    """A phandle target without compatible (a pin configuration, say) is served by the
    driver of its nearest ancestor with one."""
    probe = node
    while probe is not None and not probe.compatibles:
        probe = probe.parent
    return probe if probe is not None and probe.parent is not None else node


def pci_id(compat):
    match = re.fullmatch(r"pci([0-9a-f]{1,4}),([0-9a-f]{1,4})", compat)
    return (int(match.group(1), 16), int(match.group(2), 16)) if match else None


def find_start_nodes(root, compat, previous):
    """The okay nodes with COMPAT. A PCI device the tree does not name (Linux 6.1's Pi 4 tree
    has a bare usb@0,0) is the single leaf without compatible below the previous root-path
    node (the PCIe controller), else a virtual child of it."""
    nodes = [n for n in root.walk() if compat in n.compatibles and n.okay]
    if nodes or pci_id(compat) is None or not previous:
        return nodes
    parent = previous[-1]
    leaves = [n for n in parent.walk() if not n.children and n is not parent]
    if len(leaves) == 1 and not leaves[0].compatibles:
        node = leaves[0]
    else:
        node = Node("pci-device@0,0", parent)
        parent.children.append(node)
    node.props["compatible"] = compat.encode() + b"\0"
    node.assumed = True
    return [node]


def walk_board(root, phandles, starts):
    """Every okay node the root-path nodes STARTS ([(node, purpose)]) hang on, transitively:
    {path: Visit} in walk order; and the disabled nodes met on the way."""
    visits, disabled = {}, set()
    queue = collections.deque((node, None, purpose) for node, purpose in starts)
    while queue:
        node, via, purpose = queue.popleft()
        if not node.okay:
            disabled.add(node.path)
            continue
        visit = visits.get(node.path)
        if visit is not None:
            if purpose in visit.purposes:
                continue
            visit.purposes.append(purpose)
        else:
            visit = visits[node.path] = Visit(node, via, purpose)
        for prop in node.props:
            for pattern, cells_prop in SUPPLIER_PROPS:
                if pattern.match(prop):
                    for target in phandle_targets(node, prop, cells_prop, phandles):
                        queue.append((with_compatible(target), (prop, visit), purpose))
                    break
        if node.parent is not None:
            queue.append((node.parent, ("parent bus", visit), purpose))
    return visits, disabled


# ---------------------------------------------------------------- drivers of a node

Row = collections.namedtuple("Row", "path compat driver status purposes missing visit")


def module_state(module, kernel, present):
    """'built in', 'in initrd', or a MISSING text; and the missing modules."""
    if module in kernel.builtin:
        return "built in", []
    if module not in kernel.paths:
        return "MISSING (no such module in this kernel)", [module]
    if module not in present:
        return "MISSING", [module]
    lost = [d for d in kernel.deps.get(module, []) if d not in present and d not in kernel.builtin]
    if lost:
        return f"MISSING dependency {' '.join(lost)}", lost
    return "in initrd", []


def node_row(visit, kernel, present):
    """The table row for one visited node: which driver serves it and whether it is there."""
    node, purposes = visit.node, "+".join(sorted(visit.purposes))
    if node.parent is None:
        return Row(node.path, "-", "-", "machine (root node)", purposes, [], visit)
    compats = node.compatibles
    if not compats:
        return Row(node.path, "-", "-", "no compatible (bus or bridge node)", purposes, [], visit)
    for compat in compats:
        builtin = sorted(kernel.builtin_aliases.of_modules(node, compat))
        if builtin:
            return Row(node.path, compat, " ".join(builtin), "built in", purposes, [], visit)
    candidates = []  # (compat, modules) in the node's order of preference
    for compat in compats:
        ident = pci_id(compat)
        if ident is not None:
            klass = PCI_CLASS.get(ident, "ffffff")
            modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%ssc%si%s" % (
                ident + ident + (klass[0:2].upper(), klass[2:4].upper(), klass[4:6].upper()))
            mods = kernel.aliases.pci_modules(modalias)
        else:
            mods = kernel.aliases.of_modules(node, compat)
        if mods:
            candidates.append((compat, sorted(mods)))
    if candidates:
        return module_row(visit, candidates, kernel, present)
    for compat in compats:
        if kernel.in_image(compat):
            return Row(node.path, compat, "(kernel image)", "built in", purposes, [], visit)
    return Row(node.path, compats[0], "-", "handled by the core or by no driver", purposes, [], visit)


def module_row(visit, candidates, kernel, present):
    """Row for a node some modules claim: satisfied by the first one that is there."""
    purposes, first = "+".join(sorted(visit.purposes)), None
    for compat, mods in candidates:
        for module in mods:
            status, missing = module_state(module, kernel, present)
            if not missing:
                return Row(visit.node.path, compat, module, status, purposes, [], visit)
            if first is None:
                first = Row(visit.node.path, compat, module, status, purposes, missing, visit)
    compat, mods = candidates[0]
    if len(mods) > 1:
        first = first._replace(driver=" or ".join(mods))
    return first


def fixed_rows(kernel, present):
    rows = []
    for module, purpose in FIXED_NEEDS:
        status, missing = module_state(module, kernel, present)
        rows.append(Row("(always needed)", "-", module, status, purpose, missing, None))
    return rows


# ---------------------------------------------------------------- report

def check_dtb(kernel, present, board, dtb_path):
    """Rows for one board DTB, and the failure messages."""
    _, name, _, start_specs, needs = board
    with open(dtb_path, "rb") as f:
        root, phandles = parse_fdt(f.read(), dtb_path)
    starts, failures, previous, sdio = [], [], [], []
    failures += board_needs(root, needs, f"{name} ({os.path.basename(dtb_path)})")
    for compat, purpose in start_specs:
        nodes = find_start_nodes(root, compat, previous)
        if purpose == "SD card":  # not the card slot: an SDIO controller with its function (WiFi)
            sdio += [n.path for n in nodes if n.children]
            nodes = [n for n in nodes if not n.children]
        if not nodes:
            failures.append(f"{name} ({os.path.basename(dtb_path)}): no enabled node with compatible "
                            f"\"{compat}\" ({purpose}) in the tree: this kernel's DTB cannot boot from it")
        previous = nodes or previous
        starts += [(node, purpose) for node in nodes]
    visits, disabled = walk_board(root, phandles, starts)
    rows = [node_row(v, kernel, present) for v in visits.values()] + fixed_rows(kernel, present)
    for row in rows:
        for module in row.missing:
            failures.append(failure_text(kernel, name, dtb_path, row, module))
    skipped = [f"{p} (disabled)" for p in sorted(disabled)] + [f"{p} (SDIO, not the card slot)" for p in sdio]
    return rows, failures, skipped


def board_needs(root, needs, where):
    """The enabled nodes spindle needs after boot (NEEDS: [(compatible, count, what)]) are in
    the tree: the failure messages of those that are not."""
    failures = []
    for compat, count, what in needs:
        found = [n.path for n in root.walk() if compat in n.compatibles and n.okay]
        print(f"{where}: {len(found)} enabled \"{compat}\" ({what}): {', '.join(found) or 'none'}")
        if len(found) < count:
            failures.append(f"{where}: {len(found)} enabled node(s) with compatible \"{compat}\", "
                            f"{count} needed ({what})")
    return failures


def failure_text(kernel, board_name, dtb_path, row, module):
    where = f"{board_name} ({os.path.basename(dtb_path)})"
    if module not in kernel.paths and module not in kernel.builtin:
        return f"{where}: {module} ({row.purposes}) is neither built in nor a module of {kernel.abi}"
    if row.visit is None:
        need = f"needed for the {row.purposes}"
    else:
        need = (f"needed by {row.visit.node.path} (\"{row.compat}\", driver {row.driver}), "
                f"{row.visit.chain()}")
    return (f"{where}: module {module} ({kernel.paths.get(module, '?')}) is not in the initrd; "
            f"{need}. Fix: add {module} to {MODULE_LIST}.")


def print_table(title, rows):
    headers = ("node", "compatible", "driver", "status", "for")
    cells = [(r.path + (" (assumed)" if r.visit and getattr(r.visit.node, "assumed", False) else ""),
              r.compat, r.driver, r.status, r.purposes) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    print(title)
    for line in [headers, tuple("-" * w for w in widths)] + cells:
        print("  " + "  ".join(col.ljust(w) for col, w in zip(line, widths)).rstrip())
    print()


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Checks that the initrd of an image root holds the drivers of "
        "every Raspberry Pi board's root path (SD card, USB storage), from the board DTBs.")
    parser.add_argument("root", metavar="ROOT", help="the staged image root tree")
    keys = [b[0] for b in BOARDS]
    parser.add_argument("--boards", default=",".join(keys),
                        help=f"comma-separated boards to check (default: {','.join(keys)})")
    parser.add_argument("--drop", action="append", default=[], metavar="MODULE",
                        help="pretend MODULE is not in the initrd (repeatable; for tests)")
    parser.add_argument("--quiet", action="store_true", help="print only problems and the summary")
    args = parser.parse_args(argv)
    args.boards = [b for b in args.boards.split(",") if b]
    unknown = set(args.boards) - set(keys)
    if unknown:
        parser.error(f"unknown board {' '.join(sorted(unknown))} (known: {' '.join(keys)})")
    return args


def check(args):
    """Checks every selected board; returns the failure messages."""
    kernel = Kernel(args.root)
    in_initrd = initrd_modules(kernel)
    present = set(in_initrd)
    for module in map(norm, args.drop):
        if module in kernel.builtin:
            print(f"{PROG}: --drop {module}: built in, not a module; nothing dropped", file=sys.stderr)
        present.discard(module)
    if not args.quiet:
        print(f"kernel {kernel.abi}: {len(kernel.paths)} modules, {len(kernel.builtin)} built in, "
              f"{len(kernel.builtin_aliases)} built-in device aliases; initrd: {len(in_initrd)} modules"
              + (f" (dropped: {' '.join(args.drop)})" if args.drop else "") + "\n")
    failures, used = [], set()
    for board in BOARDS:
        if board[0] not in args.boards:
            continue
        for i, dtb in enumerate(board[2]):
            path, note = find_dtb(kernel, dtb)
            if path is None:
                if i == 0:
                    failures.append(f"{board[1]}: {note}: this kernel does not support the board "
                                    f"(or leave it out with --boards)")
                continue
            rows, problems, skipped = check_dtb(kernel, present, board, path)
            failures += problems
            used |= {r.driver for r in rows if r.status == "in initrd"}
            if not args.quiet:
                print_table(f"{board[1]}: {os.path.relpath(path, args.root)}", rows)
                if skipped:
                    print(f"  skipped: {', '.join(skipped)}\n")
            if note:
                print(f"{board[1]}: {note}", file=sys.stderr)
    for module, name, mods in kernel.soft_missing(used, present):
        print(f"{PROG}: note: {module} has the soft dependency {name} ({' '.join(mods)}), not in "
              "the initrd (modules.softdep: modprobe loads it first when it can; not an error)",
              file=sys.stderr)
    return failures


def main(argv):
    args = parse_args(argv)
    try:
        failures = check(args)
    except CheckError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    for message in dict.fromkeys(failures):
        print(f"{PROG}: MISSING on {message}", file=sys.stderr)
    if failures:
        print(f"{PROG}: FAILED: {len(dict.fromkeys(failures))} problem(s)", file=sys.stderr)
        return 1
    print(f"{PROG}: OK: every driver on the boards' root paths is built in or in the initrd")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

//! The Linux GPIO character device, uAPI v2, written by hand on libc: the ioctl structs as
//! `<linux/gpio.h>` lays them out, chip and line info, line requests, values and edge events.
//! The only place in spindle that issues GPIO ioctls (the lookup and error texts are pure, in
//! `chip.rs`; the LEDs and the button on top, in `gpio.rs`).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// Length of the name, label and consumer strings, NUL included.
pub const NAME_SIZE: usize = 32;
const LINES_MAX: usize = 64;
const NUM_ATTRS_MAX: usize = 10;

/// `enum gpio_v2_line_flag`.
pub mod flag {
    pub const USED: u64 = 1 << 0;
    pub const ACTIVE_LOW: u64 = 1 << 1;
    pub const INPUT: u64 = 1 << 2;
    pub const OUTPUT: u64 = 1 << 3;
    pub const EDGE_RISING: u64 = 1 << 4;
    pub const EDGE_FALLING: u64 = 1 << 5;
    pub const BIAS_PULL_UP: u64 = 1 << 8;
    pub const BIAS_PULL_DOWN: u64 = 1 << 9;
}

const ATTR_ID_OUTPUT_VALUES: u32 = 2;
const ATTR_ID_DEBOUNCE: u32 = 3;
/// `GPIO_V2_LINE_EVENT_RISING_EDGE` (with ACTIVE_LOW: the line became active).
pub const EVENT_RISING_EDGE: u32 = 1;

#[repr(C)]
struct ChipInfo {
    name: [u8; NAME_SIZE],
    label: [u8; NAME_SIZE],
    lines: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
union AttrValue {
    flags: u64,
    values: u64,
    debounce_period_us: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineAttribute {
    id: u32,
    padding: u32,
    value: AttrValue,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineConfigAttribute {
    attr: LineAttribute,
    mask: u64,
}

#[repr(C)]
struct LineConfig {
    flags: u64,
    num_attrs: u32,
    padding: [u32; 5],
    attrs: [LineConfigAttribute; NUM_ATTRS_MAX],
}

#[repr(C)]
struct LineRequest {
    offsets: [u32; LINES_MAX],
    consumer: [u8; NAME_SIZE],
    config: LineConfig,
    num_lines: u32,
    event_buffer_size: u32,
    padding: [u32; 5],
    fd: i32,
}

#[repr(C)]
struct LineValues {
    bits: u64,
    mask: u64,
}

#[repr(C)]
struct RawLineInfo {
    name: [u8; NAME_SIZE],
    consumer: [u8; NAME_SIZE],
    offset: u32,
    num_attrs: u32,
    flags: u64,
    attrs: [LineAttribute; NUM_ATTRS_MAX],
    padding: [u32; 4],
}

/// `struct gpio_v2_line_event`, as read from a line request's fd.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LineEvent {
    /// CLOCK_MONOTONIC, nanoseconds.
    pub timestamp_ns: u64,
    /// [`EVENT_RISING_EDGE`] or falling (2).
    pub id: u32,
    pub offset: u32,
    pub seqno: u32,
    pub line_seqno: u32,
    padding: [u32; 6],
}

/// `_IOC(dir, 0xB4, nr, size)` as the generic Linux ioctl layout (x86_64, arm64).
const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (0xB4 << 8) | nr
}
// uAPI v2 only (and the chip info, which both versions share): Debian's 7.x kernels are built
// without CONFIG_GPIO_CDEV_V1, so v1's requests (0x02-0x04, 0x08, 0x09, 0x0B) do not exist there.
const IOC_READ: u64 = 2;
const IOC_RW: u64 = 3;
const GET_CHIPINFO: u64 = ioc(IOC_READ, 0x01, std::mem::size_of::<ChipInfo>());
const GET_LINEINFO: u64 = ioc(IOC_RW, 0x05, std::mem::size_of::<RawLineInfo>());
const GET_LINE: u64 = ioc(IOC_RW, 0x07, std::mem::size_of::<LineRequest>());
const GET_VALUES: u64 = ioc(IOC_RW, 0x0E, std::mem::size_of::<LineValues>());
const SET_VALUES: u64 = ioc(IOC_RW, 0x0F, std::mem::size_of::<LineValues>());

/// Issues `req` on `fd` with `arg`; the errno as an `io::Error`.
fn ioctl<T>(fd: RawFd, req: u64, arg: &mut T) -> io::Result<()> {
    // SAFETY: every request number above is built from the size of the very struct passed
    // with it, so the kernel reads and writes within `*arg`.
    let r = unsafe { libc::ioctl(fd, req as _, arg as *mut T) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn zeroed<T>() -> T {
    // SAFETY: only used for the plain-data ioctl structs above (integers, byte arrays and a
    // union of integers), for which all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

/// A NUL-terminated kernel string.
fn c_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// An open `/dev/gpiochipN`.
pub struct Chip {
    file: File,
}

/// What `GPIO_GET_CHIPINFO_IOCTL` says of a chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipInfoText {
    /// `gpiochipN`.
    pub name: String,
    /// The driver's label (`pinctrl-bcm2711`, `9030000.pl061`).
    pub label: String,
    pub lines: u32,
}

/// What `GPIO_V2_GET_LINEINFO_IOCTL` says of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineInfo {
    pub name: String,
    /// Who holds the line ("" when free or unnamed).
    pub consumer: String,
    pub flags: u64,
}

/// How to request lines.
#[derive(Clone, Debug, Default)]
pub struct LineSettings {
    /// `flag::*` for every line of the request.
    pub flags: u64,
    /// Initial logical output values (bit i = line i of the request), outputs only.
    pub output_values: Option<u64>,
    /// Kernel debounce (µs), inputs only.
    pub debounce_us: Option<u32>,
}

impl Chip {
    /// Opens a chip device read-write.
    pub fn open(path: &Path) -> io::Result<Chip> {
        let file = File::options().read(true).write(true).open(path)?;
        Ok(Chip { file })
    }

    /// The chip's name, label and line count.
    pub fn info(&self) -> io::Result<ChipInfoText> {
        let mut ci: ChipInfo = zeroed();
        ioctl(self.file.as_raw_fd(), GET_CHIPINFO, &mut ci)?;
        Ok(ChipInfoText {
            name: c_str(&ci.name),
            label: c_str(&ci.label),
            lines: ci.lines,
        })
    }

    /// One line's name, consumer and flags.
    pub fn line_info(&self, offset: u32) -> io::Result<LineInfo> {
        let mut li: RawLineInfo = zeroed();
        li.offset = offset;
        ioctl(self.file.as_raw_fd(), GET_LINEINFO, &mut li)?;
        Ok(LineInfo {
            name: c_str(&li.name),
            consumer: c_str(&li.consumer),
            flags: li.flags,
        })
    }

    /// Requests `offsets` (at most 64) as one request named `consumer`.
    pub fn request(
        &self,
        offsets: &[u32],
        consumer: &str,
        s: &LineSettings,
    ) -> io::Result<LineRequestFd> {
        if offsets.is_empty() || offsets.len() > LINES_MAX {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut req: LineRequest = zeroed();
        req.offsets[..offsets.len()].copy_from_slice(offsets);
        let name = consumer.as_bytes();
        let n = name.len().min(NAME_SIZE - 1);
        req.consumer[..n].copy_from_slice(&name[..n]);
        req.num_lines = offsets.len() as u32;
        req.config.flags = s.flags;
        let all = if offsets.len() == 64 {
            u64::MAX
        } else {
            (1u64 << offsets.len()) - 1
        };
        let mut attrs = Vec::new();
        if let Some(v) = s.output_values {
            attrs.push((ATTR_ID_OUTPUT_VALUES, AttrValue { values: v }));
        }
        if let Some(us) = s.debounce_us {
            attrs.push((
                ATTR_ID_DEBOUNCE,
                AttrValue {
                    debounce_period_us: us,
                },
            ));
        }
        for (i, (id, value)) in attrs.into_iter().enumerate() {
            req.config.attrs[i] = LineConfigAttribute {
                attr: LineAttribute {
                    id,
                    padding: 0,
                    value,
                },
                mask: all,
            };
            req.config.num_attrs = i as u32 + 1;
        }
        ioctl(self.file.as_raw_fd(), GET_LINE, &mut req)?;
        // SAFETY: on success the kernel returns a new file descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(req.fd) };
        Ok(LineRequestFd { fd })
    }
}

/// A granted line request: set or get its values, read its edge events.
pub struct LineRequestFd {
    fd: OwnedFd,
}

/// Sets the logical values of the lines in `mask` (bit i = line i of the request) on a
/// request's raw fd. Never blocks, so the panic hook may call it.
pub fn set_values(fd: RawFd, bits: u64, mask: u64) -> io::Result<()> {
    let mut v = LineValues { bits, mask };
    ioctl(fd, SET_VALUES, &mut v)
}

impl LineRequestFd {
    /// The request's fd, for poll(2) and [`set_values`].
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Sets the logical values of the lines in `mask`.
    pub fn set_values(&self, bits: u64, mask: u64) -> io::Result<()> {
        set_values(self.raw(), bits, mask)
    }

    /// The logical values of the lines in `mask`.
    pub fn values(&self, mask: u64) -> io::Result<u64> {
        let mut v = LineValues { bits: 0, mask };
        ioctl(self.raw(), GET_VALUES, &mut v)?;
        Ok(v.bits)
    }

    /// Reads the queued edge events (call when poll(2) says the fd is readable).
    pub fn read_events(&self) -> io::Result<Vec<LineEvent>> {
        let mut buf = [LineEvent::default(); 16];
        let size = std::mem::size_of::<LineEvent>();
        // SAFETY: the buffer is 16 plain-data events long and read(2) writes at most that.
        let n = unsafe {
            libc::read(
                self.raw(),
                buf.as_mut_ptr().cast::<libc::c_void>(),
                size * buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(buf[..n as usize / size].to_vec())
    }
}

/// An eventfd that wakes a thread blocked in poll(2).
pub struct Wake {
    fd: OwnedFd,
}

impl Wake {
    pub fn new() -> io::Result<Wake> {
        // SAFETY: eventfd has no memory arguments; a non-negative result is a new fd we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: see above.
        Ok(Wake {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Makes the eventfd readable (for good).
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes the 8 bytes of `one`, the size eventfd expects.
        let _ = unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
    }
}

/// poll(2) on `fds` for input; `timeout_ms` < 0 waits for ever. Returns which are readable
/// (or hung up). EINTR counts as nothing readable.
pub fn poll_in(fds: &[RawFd], timeout_ms: i32) -> io::Result<Vec<bool>> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `p` is a live array of `p.len()` pollfds.
    let r = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(p.iter().map(|x| x.revents != 0).collect())
}

/// CLOCK_MONOTONIC now, the clock of the line events' timestamps.
pub fn monotonic_now() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn structs_and_requests_match_the_kernel_header() {
        // From a C program built against this machine's <linux/gpio.h> (uAPI v2).
        assert_eq!(size_of::<ChipInfo>(), 68);
        assert_eq!(size_of::<RawLineInfo>(), 256);
        assert_eq!(size_of::<LineRequest>(), 592);
        assert_eq!(std::mem::offset_of!(LineRequest, config), 288);
        assert_eq!(std::mem::offset_of!(LineRequest, fd), 588);
        assert_eq!(size_of::<LineConfig>(), 272);
        assert_eq!(size_of::<LineAttribute>(), 16);
        assert_eq!(size_of::<LineConfigAttribute>(), 24);
        assert_eq!(size_of::<LineEvent>(), 48);
        assert_eq!(GET_CHIPINFO, 0x8044_b401);
        assert_eq!(GET_LINEINFO, 0xc100_b405);
        assert_eq!(GET_LINE, 0xc250_b407);
        assert_eq!(GET_VALUES, 0xc010_b40e);
        assert_eq!(SET_VALUES, 0xc010_b40f);
    }

    #[test]
    fn kernel_strings_stop_at_nul() {
        let mut b = [0u8; NAME_SIZE];
        b[..9].copy_from_slice(b"leds-gpio");
        assert_eq!(c_str(&b), "leds-gpio");
        assert_eq!(c_str(&[b'x'; NAME_SIZE]).len(), NAME_SIZE);
    }

    #[test]
    fn wake_makes_poll_return() {
        let w = Wake::new().unwrap();
        assert_eq!(poll_in(&[w.raw()], 0).unwrap(), vec![false]);
        w.wake();
        assert_eq!(poll_in(&[w.raw()], 1000).unwrap(), vec![true]);
    }

    #[test]
    fn a_chip_that_is_not_a_gpio_chip_is_an_error() {
        // /dev/null opens but does not answer the chip-info ioctl.
        let c = Chip::open(Path::new("/dev/null")).unwrap();
        assert!(c.info().is_err());
    }
}

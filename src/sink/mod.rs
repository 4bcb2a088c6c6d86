//! The results stick: detection, atomic bundle copy, safe unmount (filled by the appliance issue).

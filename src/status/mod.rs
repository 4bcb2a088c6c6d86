//! Status indicators (LEDs) and the button: GPIO, on-board LEDs, console and mock backends.

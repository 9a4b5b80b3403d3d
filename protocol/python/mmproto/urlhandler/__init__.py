"""pyserial URL handlers of mmrig's own (pyserial's `protocol_handler_packages`): `unix://PATH`, a virtual bench's
line socket (protocol_unix). `import mmproto` registers this package; any other program registers it with
`serial.protocol_handler_packages.append("mmproto.urlhandler")` and then opens
`serial.serial_for_url("unix:///tmp/mmbench.XXXX/profiler.sock")` as it would /dev/ttyUSB0."""

//! `spindle mysqld init|start|stop|status --datadir PATH`.

use crate::cli::{MysqldActionArg, MysqldArgs, MysqldFormatArg};

pub fn run(args: MysqldArgs) -> anyhow::Result<i32> {
    use crate::provision::mysqld::command::{self, Action};
    let action = match args.action {
        MysqldActionArg::Init => Action::Init,
        MysqldActionArg::Start => Action::Start,
        MysqldActionArg::Stop => Action::Stop,
        MysqldActionArg::Status => Action::Status,
    };
    command::run(
        action,
        command::MysqldCommand {
            datadir: args.datadir,
            flavor: args.flavor,
            mysqld: args.mysqld,
            tcp_port: args.tcp_port,
            buffer_pool_size: args.buffer_pool_size,
            log_file_size: args.log_file_size,
            set: args.set,
            timeout_s: args.timeout,
            json: matches!(args.format, MysqldFormatArg::Json),
        },
    )
}

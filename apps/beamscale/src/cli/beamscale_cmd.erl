%% @doc The behaviour of a command-line command, one module per command (as rebar3 does it):
%% `info/0' tells its name, summary, usage and options; `do/1' does the work; `format_error/1'
%% turns its `{error, Reason}' into one line.
-module(beamscale_cmd).

-export([commands/0, find/1]).
-export_type([info/0, outcome/0]).

-type info() :: #{name := string(), summary := string(), usage := string(),
                  options := beamscale_args:spec(), details => string()}.
%% `failed': a benchmark or check failed (exit 1); `error': bad usage or bad input (exit 2),
%% unless the reason is `{failed, _}'.
%% `aborted': a load stopped by a threshold's `:abort' (exit 99, as k6).
-type outcome() :: ok | {failed, iodata()} | {error, term()} | {interrupted, 130 | 143}
                 | {aborted, iodata()}.

-callback info() -> info().
-callback do(beamscale_args:parsed()) -> outcome().
-callback format_error(term()) -> iodata().

%% @doc The command modules, in the order `help' lists them.
-spec commands() -> [module()].
commands() ->
    [beamscale_cmd_list,
     beamscale_cmd_run,
     beamscale_cmd_bench,
     beamscale_cmd_report,
     beamscale_cmd_compare,
     beamscale_cmd_load,
     beamscale_cmd_ctl,
     beamscale_cmd_saturate,
     beamscale_cmd_study,
     beamscale_cmd_db,
     beamscale_cmd_otp,
     beamscale_cmd_record,
     beamscale_cmd_history,
     beamscale_cmd_help].

%% @doc The module of the command named `Name'.
-spec find(string()) -> {ok, module()} | error.
find(Name) ->
    case [M || M <- commands(), maps:get(name, M:info()) =:= Name] of
        [M] -> {ok, M};
        [] -> error
    end.

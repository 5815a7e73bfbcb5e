%% @doc What a long command says when it is stopped from outside: on SIGTERM (`kill PID') it
%% prints "interrupted; run the same command again to continue" and ends with 128 + 15, as a
%% process killed by that signal would. It is a handler of OTP's `erl_signal_server' beside the
%% default one (whose `init:stop/0' would end the command in silence, some time later). A load
%% (`install/2') drains at its first SIGTERM; a second ends it at once, saying so, and never
%% tells to run it again (a load does not continue, it starts afresh).
%%
%% Ctrl-C is not a signal OTP lets Erlang code handle (`os:set_signal/2' refuses `sigint'): the
%% escript runs with `+Bd', so it ends at once with 130 rather than wait in the break menu, and
%% the rerun says "resuming: N of M iterations done" (`beamscale_coordinator').
-module(beamscale_interrupt).
-behaviour(gen_event).

-export([install/1, install/2]).
-export([init/1, handle_event/2, handle_call/2]).

-define(EXIT_SIGTERM, 143).

%% The command's name; with what its first SIGTERM calls, or `draining' once it was called.
-type state() :: string() | {string(), fun(() -> term()) | draining}.

%% @doc From now on SIGTERM ends this emulator saying `Who: interrupted; ...'.
-spec install(string()) -> ok.
install(Who) ->
    ok = os:set_signal(sigterm, handle),
    %% Installed once per emulator, whichever command (or test) asks again.
    _ = gen_event:delete_handler(erl_signal_server, ?MODULE, remove),
    ok = gen_event:add_handler(erl_signal_server, ?MODULE, Who).

%% @doc From now on the first SIGTERM calls `OnTerm()' (`load': stop the arrivals, drain, write
%% the run directory, then end saying "interrupted"); when it returns `false' (nothing to stop
%% yet), or at a second SIGTERM, the emulator ends at once with 128 + 15, saying so in words of
%% its own: such a command (a load) cannot be continued by running it again.
-spec install(string(), fun(() -> term())) -> ok.
install(Who, OnTerm) ->
    ok = os:set_signal(sigterm, handle),
    %% OTP's own handler would stop the emulator (init:stop/0) while the load drains.
    _ = gen_event:delete_handler(erl_signal_server, erl_signal_handler, remove),
    _ = gen_event:delete_handler(erl_signal_server, ?MODULE, remove),
    ok = gen_event:add_handler(erl_signal_server, ?MODULE, {Who, OnTerm}).

%% @private
-spec init(State) -> {ok, State} when State :: state().
init(State) -> {ok, State}.

%% @private
-spec handle_event(term(), state()) -> {ok, state()}.
handle_event(sigterm, {Who, OnTerm}) when is_function(OnTerm) ->
    case OnTerm() of
        false -> stop_now(Who, "interrupted before it started");
        _ -> io:put_chars(standard_error,
                          [Who, ": stopping: no new users, those in flight drain; a second "
                           "SIGTERM ends it at once\n"]),
             {ok, {Who, draining}}
    end;
handle_event(sigterm, {Who, draining}) ->
    stop_now(Who, "interrupted again: ended at once, without the rest of its drain");
handle_event(sigterm, Who) ->
    stop_now(Who, "interrupted; run the same command again to continue");
handle_event(_Signal, Who) ->
    {ok, Who}.

%% @private
-spec handle_call(term(), State) -> {ok, ok, State}.
handle_call(_Request, Who) -> {ok, ok, Who}.

-spec stop_now(iodata(), iodata()) -> no_return().
stop_now(Who, Words) ->
    io:put_chars(standard_error, [Who, ": ", Words, "\n"]),
    erlang:halt(?EXIT_SIGTERM, [{flush, true}]).

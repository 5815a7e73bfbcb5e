%% @doc A Common Test hook (rebar.config's `ct_hooks'): SIGUSR2 ends a CT run cleanly. The
%% running test case is aborted (its end_per_testcase runs), the cases and suites left are
%% skipped, and each suite started ends with its end_per_suite; CT then ends. `make test'
%% stopped (Ctrl-C) has CT's stream 2 sent it (scripts/ct-streams.sh).
%%
%% Why: a port's program runs in a session of its own, so no signal to CT's process group
%% reaches the servers a suite started; only its end_per_suite stops them (by pid). Why not
%% SIGTERM: the emulator's default for it (`init:stop/0', no end_per_suite) and the handler
%% `beamscale_interrupt' that a command run in this node leaves (it halts) stay as they are.
%%
%% The same module is the `erl_signal_server' handler; it knows whether a test case's body
%% runs (only a body is aborted, never an init or end function).
-module(beamscale_test_interrupt).

%% The hook.
-export([init/2, pre_init_per_suite/3, pre_init_per_testcase/4, post_init_per_testcase/5,
         pre_end_per_testcase/4, terminate/1]).
%% The signal handler (gen_event).
-export([init/1, handle_event/2, handle_call/2]).

-define(INTERRUPTED, {?MODULE, interrupted}).
-define(SKIP, {skip, "interrupted (SIGUSR2): skipped"}).

%%% Hook

init(_Id, _Opts) ->
    persistent_term:put(?INTERRUPTED, false),
    _ = gen_event:delete_handler(erl_signal_server, ?MODULE, remove),
    ok = gen_event:add_handler(erl_signal_server, ?MODULE, []),
    ok = os:set_signal(sigusr2, handle),
    {ok, #{}}.

pre_init_per_suite(_Suite, Config, State) -> go_on(Config, State).

pre_init_per_testcase(_Suite, _Case, Config, State) -> go_on(Config, State).

post_init_per_testcase(_Suite, _Case, _Config, Return, State) ->
    ok = gen_event:call(erl_signal_server, ?MODULE, {body, true}),
    {Return, State}.

pre_end_per_testcase(_Suite, _Case, Config, State) ->
    ok = gen_event:call(erl_signal_server, ?MODULE, {body, false}),
    {Config, State}.

terminate(_State) ->
    ok = os:set_signal(sigusr2, default),
    _ = gen_event:delete_handler(erl_signal_server, ?MODULE, remove),
    ok.

go_on(Config, State) ->
    case persistent_term:get(?INTERRUPTED, false) of
        true -> {?SKIP, State};
        false -> {Config, State}
    end.

%%% Signal handler

init(_) -> {ok, #{body => false}}.

handle_event(sigusr2, #{body := Body} = S) ->
    persistent_term:put(?INTERRUPTED, true),
    io:format(standard_error, "CT: SIGUSR2: the running case aborted, the rest skipped, "
                              "end_per_suite run~n", []),
    %% Not from here: this server must not wait on CT.
    _ = Body andalso is_pid(spawn(fun() -> ct:abort_current_testcase(interrupted) end)),
    {ok, S#{body := false}};
handle_event(_Signal, S) -> {ok, S}.

handle_call({body, Body}, S) -> {ok, ok, S#{body := Body}}.

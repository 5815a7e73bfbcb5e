%% @doc beamscale as a library: the commands `bench', `run', `load' and `compare' called from
%% Erlang or Elixir code (a shell, a test, a mix task), their results returned as maps.
%%
%% Options are the command's (`beamscale help bench'), keyed by the atom of the long option
%% without its dashes, `-' as `_' (`--max-callers' is `max_callers'), each value as the
%% command line would give it: a string, a number, `true' for a flag, a list of strings for a
%% repeatable option; `callers' and `schedulers' also take lists of counts (`[1, 2]') and
%% `callers' the atom `squeeze'. They are checked as the command line's are: a bad one is
%% `{error, Reason}', with the command's own text from `format_error/1'. What the commands
%% print goes into the result's `output' rather than to the terminal.
%%
%% This node becomes distributed (a random cookie, loopback) if it is not, as beamscale's own
%% node is: the points are measured on fresh peer nodes.
-module(beamscale).

-export([bench/2, run/1, load/2, compare/2, code_path/0, format_error/1]).
-export_type([opts/0, error/0]).

-type opts() :: #{atom() => string() | number() | boolean() | [string()] | [pos_integer()]
                              | squeeze}.
-type error() :: {error, {module(), term()}}.

%% @doc Microbenchmarks of expressions (`"lists:seq(1, 100)."'), `M:F/A' or files, each point
%% in a fresh node, as `beamscale bench'. In the default mode, `rows' has one map per
%% expression (and input and scheduler count): `ns' (the median ns per call, the empty loop's
%% cost taken off) with `ns_low' and `ns_high', `calls_s', `words' and `reductions' per call,
%% `per_call' (each sample's ns), `n' samples, `cv', `otp', `schedulers', `label', `input'.
%% Without `code_path', the fresh nodes get this node's code path outside OTP's own libraries
%% (a rebar3 shell's or a mix project's compiled code), so the caller's modules are there.
-spec bench([string()], opts()) -> #{mode := atom(), rows := [map()]} | error().
bench(Exprs, Opts) ->
    Defaults = #{quiet => true, code_path => code_path_option()},
    case parsed(beamscale_cmd_bench, Exprs, maps:merge(Defaults, Opts)) of
        {ok, Parsed} ->
            captured(beamscale_cmd_bench, fun() -> beamscale_cmd_bench:measure(Parsed) end);
        {error, _} = Error -> Error
    end.

%% @doc A suite run (`beamscale run'): `#{dir, summary, output}', `summary' the run's
%% `summary.json' decoded. Without `name', one made of the time (`lib-DATE-TIME').
-spec run(opts()) -> #{dir := file:filename(), summary := term(), output := binary()}
                     | error().
run(Opts) -> in_dir(beamscale_cmd_run, [], Opts).

%% @doc One load run of a scenario file (`beamscale load'), the same map as `run/1'.
-spec load(file:filename(), opts()) ->
    #{dir := file:filename(), summary := term(), output := binary()} | error().
load(Scenario, Opts) -> in_dir(beamscale_cmd_load, [Scenario], Opts).

%% @doc Two run directories compared (`beamscale compare'): for suite runs, `rows' holds each
%% key measured in both with the ratio of medians B / A, its interval and significance; for
%% load runs, `output' holds the comparison's text. Two runs of the instruction clock also have
%% `instructions', their counts compared per key. `compare.html' is written into B.
-spec compare(file:filename(), file:filename()) ->
    #{output := binary(), rows => [beamscale_stats_compare:result()],
      instructions => [beamscale_stats_instr:run_result(beamscale_stats:key())]} | error().
compare(A, B) ->
    case parsed(beamscale_cmd_compare, [A, B], #{}) of
        {ok, Parsed} ->
            Compare = fun() -> ok(beamscale_cmd_compare:do(Parsed)) end,
            case captured(beamscale_cmd_compare, Compare) of
                #{output := _} = Done -> maps:merge(Done, suite_rows(A, B));
                Error -> Error
            end;
        {error, _} = Error -> Error
    end.

%% @doc This node's code path less OTP's libraries and the current directory: the caller's
%% compiled code (a rebar3 shell's, a mix project's, Elixir's), for the nodes `bench' measures.
-spec code_path() -> [file:filename()].
code_path() ->
    Otp = code:lib_dir(),
    [D || D <- code:get_path(), D =/= ".", not lists:prefix(Otp ++ "/", D), filelib:is_dir(D)].

%% @doc The text of an error of this module's functions.
-spec format_error(term()) -> iodata().
format_error({command, Mod, Reason}) -> beamscale_error:format(Mod, Reason);
format_error({option, Key}) -> io_lib:format("~0tp: not an option of the command", [Key]);
format_error({failed, Text}) -> Text;
format_error({interrupted, Status}) -> io_lib:format("interrupted (~b)", [Status]).

%%% Internals

%% `--code-path' of the command: none (`false') when the node has no code of the caller's.
code_path_option() ->
    case code_path() of
        [] -> false;
        Dirs -> Dirs
    end.

in_dir(Mod, Args, Opts0) ->
    Opts = maps:merge(#{quiet => true, out => "runs", name => default_name()}, Opts0),
    case parsed(Mod, Args, Opts) of
        {ok, Parsed} ->
            case captured(Mod, fun() -> ok(Mod:do(Parsed)) end) of
                #{output := Out} ->
                    Dir = filename:join(maps:get(out, Opts), maps:get(name, Opts)),
                    #{dir => Dir, summary => summary(Dir), output => Out};
                Error -> Error
            end;
        {error, _} = Error -> Error
    end.

summary(Dir) ->
    case file:read_file(beamscale_format_rundir:path(Dir, summary_json)) of
        {ok, Json} -> decoded(beamscale_format_json:decode(Json));
        {error, _} -> none
    end.

%% The decoded term itself, as the docs say, not the decoder's `{ok, _}'.
decoded({ok, Term}) -> Term;
decoded({error, _}) -> none.

suite_rows(A, B) ->
    case [beamscale_writer:is_load(D) || D <- [A, B]] of
        [false, false] ->
            Rows = #{rows => beamscale_stats_compare:compare(beamscale_store:measurements(A),
                                                             beamscale_store:measurements(B))},
            case {beamscale_instr_store:read(A), beamscale_instr_store:read(B)} of
                {{ok, CA}, {ok, CB}} ->
                    Rows#{instructions => beamscale_stats_instr:compare_runs(CA, CB)};
                _ -> Rows
            end;
        _ -> #{}
    end.

ok(ok) -> {ok, done};
ok({error, Reason}) -> {error, Reason};
ok({failed, _} = Failed) -> {error, Failed};
ok({interrupted, _} = I) -> {error, I}.

%% The command's own parser on the options written back as a command line.
parsed(Mod, Args, Opts) ->
    #{options := Spec} = Mod:info(),
    try lists:append([argv(flag(lists:keyfind(K, 1, Spec)), K, V)
                      || {K, V} <- lists:sort(maps:to_list(Opts))]) of
        Argv -> beamscale_args:parse(Spec, Args ++ Argv)
    catch throw:{option, K} -> {error, {?MODULE, {option, K}}}
    end.

%% An option's flag and type (a declaration may carry its default too).
flag(false) -> false;
flag(O) -> {element(2, O), element(3, O)}.

argv(false, K, _V) -> throw({option, K});
argv({_Flag, {list, _}}, _K, false) -> [];
argv({_Flag, flag}, _K, false) -> [];
argv({Flag, flag}, _K, true) -> [Flag];
argv({Flag, {list, _}}, _K, Vs) when is_list(Vs), is_list(hd(Vs)) ->
    lists:append([[Flag, V] || V <- Vs]);
argv({Flag, _}, _K, V) -> [Flag, text(V)].

text(V) when is_integer(V) -> integer_to_list(V);
text(V) when is_float(V) -> float_to_list(V, [short]);
text(V) when is_atom(V) -> atom_to_list(V);
text([N | _] = Ns) when is_integer(N), N < 10000, length(Ns) < 64 ->
    case io_lib:printable_unicode_list(Ns) of
        true -> Ns;
        false -> lists:join(",", [integer_to_list(I) || I <- Ns])
    end;
text(V) -> V.

%% `F' run in a process of its own whose output is kept (the group leader is a capture).
captured(Mod, F) ->
    Capture = beamscale_bench_capture:start(),
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() ->
                                       group_leader(Capture, self()),
                                       Self ! {self(), F()}
                               end),
    receive
        {Pid, Result} ->
            demonitor(Ref, [flush]),
            Out = beamscale_bench_capture:take(Capture),
            ok = beamscale_bench_capture:stop(Capture),
            result(Mod, Result, Out);
        {'DOWN', Ref, process, Pid, Why} ->
            ok = beamscale_bench_capture:stop(Capture),
            erlang:error(Why)
    end.

result(_Mod, {ok, done}, Out) -> #{output => Out};
result(_Mod, {ok, Map}, _Out) when is_map(Map) -> Map;
result(_Mod, {error, {failed, _} = Failed}, _Out) -> {error, {?MODULE, Failed}};
result(_Mod, {error, {interrupted, _} = I}, _Out) -> {error, {?MODULE, I}};
result(Mod, {error, Reason}, _Out) -> {error, {?MODULE, {command, Mod, Reason}}}.

default_name() ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("lib-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b-~b",
                                [Y, Mo, D, H, Mi, S, erlang:unique_integer([positive])])).

%% @doc What `run.json' says about a run: tool version, git revision, each erl's OTP release and
%% emulator flavour, host, CPU model, logical cores, start and end time, resolved configuration.
-module(beamscale_runinfo).

-export([collect/1, erl_info/1, to_json/1, now_iso/0]).

-define(ERL_PROBE_TIMEOUT, 30000).
%% `git rev-parse HEAD' reads a file or two.
-define(GIT_TIMEOUT, 10000).

%% @doc The facts about this host and the configured erls.
-spec collect(beamscale_config:config()) -> map().
collect(#{erls := Erls, erl_args := ArgSets} = Config) ->
    _ = application:load(beamscale),
    {ok, Vsn} = application:get_key(beamscale, vsn),
    {ok, Host} = inet:gethostname(),
    #{tool => <<"beamscale">>, tool_version => list_to_binary(Vsn), git_revision => git_revision(),
      host => list_to_binary(Host), cpu_model => cpu_model(),
      logical_cores => beamscale_os:logical_cores(),
      erls => maps:from_list([{Alias, erl_info(Path)} || {Alias, Path} <- Erls]),
      config => (to_json(maps:remove(overrides, Config)))#{
                    erl_args => maps:from_list([{A, {string, F}} || {A, F} <- ArgSets])},
      overrides => to_json(maps:get(overrides, Config))}.

%% @doc OTP release, ERTS version and emulator flavour of an erl, asked of that erl itself.
-spec erl_info(string()) -> map().
erl_info(Erl) ->
    Eval = "io:format(\"~s ~s ~s ~s\", [erlang:system_info(otp_release), "
           "erlang:system_info(version), erlang:system_info(emu_flavor), "
           "erlang:system_info(emu_type)]), halt().",
    case beamscale_os:cmd(Erl, ["-noshell", "-eval", Eval], ?ERL_PROBE_TIMEOUT) of
        {0, Out} ->
            case string:lexemes(Out, " \n") of
                [Otp, Erts, Flavor, Type] ->
                    #{path => list_to_binary(Erl), otp_release => Otp, erts => Erts,
                      emu_flavor => Flavor, emu_type => Type};
                _ -> #{path => list_to_binary(Erl), error => Out}
            end;
        {_, Out} -> #{path => list_to_binary(Erl), error => Out}
    end.

%% @doc A configuration term as JSON: strings stay strings, `{Key, Value}' lists become objects.
-spec to_json(term()) -> beamscale_format_json:json().
to_json(M) when is_map(M) -> maps:map(fun(_, V) -> to_json(V) end, M);
to_json([]) -> [];
to_json(L) when is_list(L) ->
    case {io_lib:printable_unicode_list(L), lists:all(fun is_pair/1, L)} of
        {true, _} -> {string, L};
        {_, true} -> maps:from_list([{K, to_json(V)} || {K, V} <- L]);
        _ -> [to_json(E) || E <- L]
    end;
to_json(T) when is_atom(T); is_number(T); is_binary(T) -> T;
to_json(T) -> {string, io_lib:format("~0tp", [T])}.

%% @doc The current UTC time in ISO 8601.
-spec now_iso() -> binary().
now_iso() ->
    list_to_binary(calendar:system_time_to_rfc3339(erlang:system_time(second),
                                                   [{offset, "Z"}])).

is_pair({K, _}) -> is_atom(K);
is_pair(_) -> false.

git_revision() ->
    Root = filename:dirname(filename:dirname(filename:dirname(
             filename:dirname(filename:absname(escript_or_cwd()))))),
    case os:find_executable("git") of
        false -> null;
        Git ->
            case beamscale_os:cmd(Git, ["-C", Root, "rev-parse", "HEAD"], ?GIT_TIMEOUT) of
                {0, Out} -> string:trim(Out);
                _ -> null
            end
    end.

%% The escript lives at ROOT/_build/default/bin/beamscale.
escript_or_cwd() ->
    try escript:script_name()
    catch _:_ -> filename:join([element(2, file:get_cwd()), "_build", "default", "bin", "x"])
    end.

cpu_model() ->
    case file:read_file("/proc/cpuinfo") of
        {ok, Bin} ->
            case re:run(Bin, "^model name\\s*:\\s*(.*)$", [multiline, {capture, [1], binary}]) of
                {match, [Model]} -> Model;
                nomatch -> null
            end;
        {error, _} -> null
    end.

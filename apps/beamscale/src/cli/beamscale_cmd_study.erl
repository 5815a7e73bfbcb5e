%% @doc `beamscale study NAME': run one of the seed papers' experiments (see `beamscale_study')
%% and write its run directory and report.
-module(beamscale_cmd_study).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "study", summary => lists:flatten(["run a seed paper's experiment (",
                                   lists:join(", ", names(beamscale_study:built())), ")"]),
      usage => "beamscale study NAME [OPTIONS]",
      details => studies_text(),
      options => [
          {version, "--version", string, "short, intermediate or long",
           {value, atom_to_list(maps:get(version, beamscale_study:defaults(#{})))}},
          {schedulers, "--schedulers", {list, string}, "scheduler counts",
           {text, "the study's"}}]
          ++ beamscale_cli_options:seed("the study's random choices") ++ [
          {otp, "--otp", {list, string},
           taking(otp) ++ " only: OTP releases to run on, 25,27 (docs/otp.md)"},
          {quiet, "--quiet", flag, "print no progress"}]
          ++ beamscale_cli_options:name("STUDY") ++ beamscale_cli_options:out()
          ++ beamscale_cli_options:profile("the node under test at each load level ("
                                           ++ taking(profile) ++ ")",
                                           {"ms profiled per level",
                                            ", at most the level's hold"}) ++ [
          {web, "--web", integer, "serve a live page of the load levels on "
                                  "http://127.0.0.1:PORT/ (0: a free port)"}]}.

%% @doc Check the options, run the study, print where its report is.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := [Study]}) ->
    case {beamscale_study:find(Study), options(Opts)} of
        {error, _} -> {error, {unknown_study, Study}};
        {_, {error, _} = Error} -> Error;
        {{ok, Mod}, {ok, Checked}} -> takes(Mod, Study, Checked)
    end;
do(#{args := []}) -> {error, no_study};
do(#{args := [_, Extra | _]} = Parsed) -> beamscale_cmd_run:extra_argument(Parsed, Extra).

%% The options only some studies take, asked of the study (`info/0''s `options').
takes(Mod, Study, Checked) ->
    Refused = [{Key, Option} || {Key, Option} <- [{erls, otp}, {profile, profile}],
                                is_map_key(Key, Checked), not beamscale_study:takes(Mod, Option)],
    case Refused of
        [{_, Option} | _] -> {error, {not_for, Option, Study}};
        [] -> start(Mod, Study, Checked)
    end.

start(Mod, Study, Checked) ->
    %% Studies resume as runs do (finished iterations and levels are kept).
    ok = beamscale_interrupt:install("beamscale study"),
    Web = maps:get(web, Checked, none),
    Run = fun(none) -> Mod:run(beamscale_study:defaults(Checked#{study => Study}));
             (W) -> Mod:run(beamscale_study:defaults(Checked#{study => Study, web => W}))
          end,
    case beamscale_web:with(Web, Run) of
        {ok, Dir} ->
            io:put_chars(beamscale_profile:notes(Dir)),
            io:format("Report:~n~ts~n", [beamscale_format_rundir:path(Dir, index)]);
        {error, Reason} ->
            {error, {study_failed, Mod, Reason}}
    end.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({study_failed, Mod, Reason}) -> beamscale_error:format(Mod, Reason);
format_error({unknown_study, S}) -> ["unknown study ", S, "; ", studies_text()];
format_error(no_study) -> ["give the study's name; ", studies_text()];
format_error({bad_option, Opt, V}) -> io_lib:format("~s: bad value ~ts", [Opt, V]);
format_error({not_for, Option, S}) ->
    Takers = [M || M <- beamscale_study:built(), beamscale_study:takes(M, Option)],
    io_lib:format("--~s: only ~ts take~s it, not ~ts",
                  [Option, lists:join(", ", names(Takers)), [$s || length(Takers) =:= 1], S]).

options(Opts) ->
    Profile = [profile_rate, profile_window, profile_stacks, profile],
    try {ok, maps:merge(maps:fold(fun option/3, #{}, maps:without(Profile, Opts)),
                        profile(Opts))}
    catch throw:{bad_option, _, _} = Bad -> {error, Bad}
    end.

%% The profile options, checked as `run''s `profile' key is.
profile(Opts) ->
    case beamscale_cmd_run:checked_profile(Opts) of
        {ok, Map} -> Map;
        {error, Expected} -> throw({bad_option, "--profile-*", Expected})
    end.

option(version, V, Acc) ->
    case lists:member(V, ["short", "intermediate", "long"]) of
        true -> Acc#{version => list_to_atom(V)};
        false -> throw({bad_option, "--version", V})
    end;
option(schedulers, Vs, Acc) ->
    Acc#{schedulers => [count(V) || V <- Vs]};
option(otp, Vs, Acc) ->
    case beamscale_otp:erls(Vs, []) of
        {ok, Erls} -> Acc#{erls => Erls};
        {error, {_, {_, Bad}}} -> throw({bad_option, "--otp", Bad})
    end;
option(Key, V, Acc) ->
    Acc#{Key => V}.

count(V) ->
    try list_to_integer(string:trim(V)) of
        N when N > 0 -> N;
        _ -> throw({bad_option, "--schedulers", V})
    catch error:badarg -> throw({bad_option, "--schedulers", V})
    end.


%% The studies that take an option, by name: the help says what each study declares.
taking(Option) ->
    lists:flatten(lists:join(", ", [maps:get(name, M:info()) || M <- beamscale_study:built(),
                                                              beamscale_study:takes(M, Option)])).
names(Mods) -> [maps:get(name, M:info()) || M <- Mods].

studies_text() ->
    Built = [M:info() || M <- beamscale_study:built()],
    ["studies: " | lists:join("; ", [[N, " (", S, ")"] || #{name := N, summary := S} <- Built])].

-module(beamscale_preload_tests).

-include_lib("eunit/include/eunit.hrl").

%% An escript whose archive holds two fresh modules and one with an `on_load' function.
escript(Dir) ->
    Beams = [{"app_a/ebin/" ++ atom_to_list(M) ++ ".beam", beam(M, Extra)}
             || {M, Extra} <- [{preload_t_one, []}, {preload_t_two, []},
                               {preload_t_onload, ["-on_load(init/0)."]}]],
    File = filename:join(Dir, "script"),
    ok = escript:create(File, [shebang, {archive, Beams, []}]),
    File.

beam(Mod, Extra) ->
    Forms = [form(F) || F <- ["-module(" ++ atom_to_list(Mod) ++ ").", "-export([f/0])."]
                            ++ Extra ++ ["f() -> " ++ atom_to_list(Mod) ++ ".", "init() -> ok."]],
    {ok, Mod, Bin} = compile:forms(Forms, [binary]),
    Bin.

form(Text) ->
    {ok, Tokens, _} = erl_scan:string(Text),
    {ok, Form} = erl_parse:parse_form(Tokens),
    Form.

tmpdir() ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"),
                        "beamscale_preload_" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = filelib:ensure_path(Dir),
    Dir.

forget(Mods) -> [begin code:purge(M), code:delete(M), code:purge(M) end || M <- Mods].

archive_loads_every_module_test() ->
    Dir = tmpdir(),
    Mods = [preload_t_one, preload_t_two, preload_t_onload],
    forget(Mods),
    try
        Script = escript(Dir),
        ?assertEqual(ok, beamscale_preload:archive(Script)),
        %% Loaded without the code path (the archive is not on it): from the archive's bytes.
        ?assertEqual(preload_t_one, preload_t_one:f()),
        ?assertEqual(filename:join(Script, "app_a/ebin/preload_t_two.beam"),
                     code:which(preload_t_two)),
        %% A module with `on_load' cannot load with the others; it does not stop them.
        ?assertNot(erlang:module_loaded(preload_t_onload))
    after
        forget(Mods),
        file:del_dir_r(Dir)
    end.

loaded_module_not_replaced_test() ->
    Dir = tmpdir(),
    forget([preload_t_one, preload_t_two, preload_t_onload]),
    try
        {ok, preload_t_one, Bin} = compile:forms([form("-module(preload_t_one)."),
                                                  form("-export([g/0])."), form("g() -> here.")],
                                                 [binary]),
        {module, _} = code:load_binary(preload_t_one, "here.beam", Bin),
        ok = beamscale_preload:archive(escript(Dir)),
        ?assertEqual(here, preload_t_one:g()),
        ?assertEqual(preload_t_two, preload_t_two:f())
    after
        forget([preload_t_one, preload_t_two, preload_t_onload]),
        file:del_dir_r(Dir)
    end.

no_archive_test() ->
    Dir = tmpdir(),
    try
        Plain = filename:join(Dir, "plain"),
        ok = escript:create(Plain, [shebang, {source, <<"main(_) -> ok.\n">>}]),
        ?assertEqual(ok, beamscale_preload:archive(Plain)),
        ?assertEqual(ok, beamscale_preload:archive(filename:join(Dir, "missing")))
    after
        file:del_dir_r(Dir)
    end.

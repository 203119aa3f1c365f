// PEC cylindrical cavity of the seed paper (002): radius r = 1 m, height h = 0.5 m.
// Regenerate the committed meshes with ./regenerate.sh (it records the gmsh version).
// Override the element size with: gmsh -3 -setnumber lc 0.10 cylinder.geo
SetFactory("OpenCASCADE");
DefineConstant[ r = {1.0, Name "radius (m)"}, h = {0.5, Name "height (m)"},
                lc = {0.10, Name "characteristic length (m)"} ];
Cylinder(1) = {0, 0, 0, 0, 0, h, r};
Physical Volume("vacuum", 1) = {1};
Physical Surface("pec", 2) = {1, 2, 3};
Mesh.CharacteristicLengthMin = lc;
Mesh.CharacteristicLengthMax = lc;
Mesh.CharacteristicLengthFromCurvature = 0;
Mesh.Algorithm3D = 1; // Delaunay
Mesh.RandomSeed = 1;
